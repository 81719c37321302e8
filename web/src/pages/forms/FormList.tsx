import { useMutation } from "@connectrpc/connect-query";
import { SignupFormsService } from "@gen/mail/v1/forms_pb.js";
import { type Form, MailService } from "@gen/mail/v1/mail_pb.js";
import { useSession } from "../../app/auth/session.tsx";
import { formatNumber } from "../../app/format.tsx";
import { ConfirmAction } from "../../components/admin/ConfirmAction.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { Words } from "../../components/admin/Words.tsx";
import { type Column, ListView, titleLink } from "../../components/list/ListView.tsx";
import { type PagedList, usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";
import { CreateForm } from "./CreateForm.tsx";
import { SIGNUP_DAYS, useRecentSignups } from "./signups.ts";

/** A form as a list row: its public id is its id (the hosted page's and the screen's address). */
export type FormRow = Form & { readonly id: string };

/** The active forms (GET /mail/v1/forms), each with its public id as the row's id. */
export function useActiveForms(): PagedList<FormRow> {
  const list = usePagedList(MailService.method.listForms, {});
  return { ...list, items: list.items.map((form) => ({ ...form, id: form.publicId })) };
}

/** The sign-ups of the last 30 days: a number, or a dash while the count is under way or failed. */
export function SignupCount({ counts, publicId }: { counts: ReadonlyMap<string, number> | undefined; publicId: string }) {
  if (!counts) return <span className="muted">—</span>;
  return <>{formatNumber(counts.get(publicId) ?? 0)}</>;
}

function columns(counts: ReadonlyMap<string, number> | undefined, isAdmin: boolean): readonly Column<FormRow>[] {
  return [
    titleLink("Name", (form) => form.name),
    { header: `Sign-ups, ${SIGNUP_DAYS} days`, cell: (form) => <SignupCount counts={counts} publicId={form.publicId} /> },
    { header: "Opt-in", cell: (form) => (form.doubleOptIn ? "double" : "single") },
    { header: "Language", cell: (form) => <span className="mono">{form.language}</span> },
    { header: "Fields", cell: (form) => <Words items={form.fields.map((field) => field.name)} /> },
    ...(isAdmin ? [{ header: "Actions", role: "actions" as const, cell: (form: FormRow) => <DeactivateForm form={form} /> }] : []),
  ];
}

/** The Forms tab (every member reads; Mail administrators create and deactivate): /admin/forms. */
export function FormList() {
  const { isAdmin } = useSession();
  const list = useActiveForms();
  const { counts, error } = useRecentSignups();
  return (
    <Page title="Sign-up forms" actions={isAdmin ? <CreateForm /> : undefined}>
      <p className="hint">
        Active forms, each on its own hosted page. A sign-up of a new address becomes a contact; the count is of the sign-ups in the last {SIGNUP_DAYS} days.
      </p>
      {error !== undefined ? (
        <p role="alert" className="error">
          The sign-ups could not be counted.
        </p>
      ) : null}
      <ListView list={list} label="Table of forms" noun="forms" columns={columns(counts, isAdmin)} empty="No active form." />
    </Page>
  );
}

/** Deactivate (after confirming): the form leaves the list and its page takes no more sign-ups. */
export function DeactivateForm({ form, onDone }: { form: Form; onDone?: () => void }) {
  const refresh = useRefresh(MailService);
  const deactivate = useMutation(SignupFormsService.method.deactivateForm);
  return (
    <ConfirmAction
      label="Deactivate"
      ariaLabel={`Deactivate ${form.name}`}
      title={`Deactivate the form ${form.name}?`}
      description={
        <p>
          Its hosted page stops taking sign-ups and answers “not found”; links and snippets to it stop working. Contacts it brought stay, and their
          consent keeps naming it. A deactivated form cannot be turned back on.
        </p>
      }
      confirmLabel="Deactivate form"
      destructive
      onConfirm={async () => {
        await deactivate.mutateAsync({ publicId: form.publicId });
        onDone?.();
        await refresh();
      }}
    />
  );
}
