import { useMutation } from "@connectrpc/connect-query";
import { type ContactList, CreateContactListRequestSchema, ListsService } from "@gen/mail/v1/lists_pb.js";
import { useState } from "react";
import { Link } from "react-router";
import { DateTime, formatNumber } from "../../app/format.tsx";
import { ConfirmAction } from "../../components/admin/ConfirmAction.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { text } from "../../components/form/contract-rules.ts";
import { Form, FormAlert, Submit, TextField, useContractForm } from "../../components/form/Form.tsx";
import { type Column, ListView, titleLink } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";

/** The link to a list's contacts (the contacts table filtered by the list). */
function membersPath(list: ContactList): string {
  return `/contacts?listId=${encodeURIComponent(list.id)}`;
}

const COLUMNS: readonly Column<ContactList>[] = [
  titleLink("Name", (list) => list.name, { to: membersPath }),
  {
    header: "Contacts",
    cell: (list) => (
      <Link to={membersPath(list)} aria-label={`${formatNumber(list.memberCount)} contacts in ${list.name}`}>
        {formatNumber(list.memberCount)}
      </Link>
    ),
  },
  { header: "Created", cell: (list) => <DateTime value={list.createdAt} /> },
  {
    header: "Actions",
    role: "actions",
    cell: (list) => (
      <div className="row-actions">
        <ListNameDialog list={list} />
        <DeleteList list={list} />
      </div>
    ),
  },
];

/** The Lists tab (Mail administrators): /admin/lists. A contact joins lists through its write (listIds). */
export default function ListsPage() {
  const list = usePagedList(ListsService.method.listContactLists, {});
  return (
    <Page title="Lists" actions={<ListNameDialog />}>
      <p className="hint">A contact joins or leaves lists through its write (POST /mail/v1/contacts, listIds). Deleting a list keeps its contacts.</p>
      <ListView list={list} label="Table of lists" noun="lists" columns={COLUMNS} empty="No list yet." />
    </Page>
  );
}

/**
 * A list's name in a dialog: a new list's, or a new name for `list`. Names
 * are unique within the company whatever their case; the server's refusal
 * lands on the field.
 */
function ListNameDialog({ list }: { list?: ContactList }) {
  const [open, setOpen] = useState(false);
  const refresh = useRefresh(ListsService);
  const create = useMutation(ListsService.method.createContactList, { onSuccess: refresh });
  const rename = useMutation(ListsService.method.renameContactList, { onSuccess: refresh });
  // Both requests have the same `name` rule; the form takes CreateContactList's.
  const form = useContractForm({ request: CreateContactListRequestSchema, fields: { name: text() }, defaults: { name: list?.name ?? "" } });
  const openOrClose = (next: boolean) => {
    setOpen(next);
    // Opened again: empty for a new list, the list's name now for a rename.
    if (next) form.methods.reset({ name: list?.name ?? "" });
  };
  const dialog = list
    ? { label: "Rename", ariaLabel: `Rename ${list.name}`, triggerClass: "button", title: `Rename ${list.name}`, field: "New name", submit: "Rename list", pending: "Renaming…" }
    : { label: "New list", title: "New list", field: "Name", submit: "Create list", pending: "Creating…" };
  return (
    <FormDialog label={dialog.label} ariaLabel={dialog.ariaLabel} triggerClass={dialog.triggerClass} title={dialog.title} open={open} onOpenChange={openOrClose}>
      <Form
        form={form}
        className="form"
        onSubmit={async ({ name }) => {
          await (list ? rename.mutateAsync({ id: list.id, name }) : create.mutateAsync({ name }));
          openOrClose(false);
        }}
      >
        <TextField name="name" label={dialog.field} autoComplete="off" />
        <FormAlert />
        <div className="actions">
          <Submit pending={dialog.pending}>{dialog.submit}</Submit>
        </div>
      </Form>
    </FormDialog>
  );
}

function DeleteList({ list }: { list: ContactList }) {
  const refresh = useRefresh(ListsService);
  const remove = useMutation(ListsService.method.deleteContactList);
  return (
    <ConfirmAction
      label="Delete"
      ariaLabel={`Delete ${list.name}`}
      title={`Delete the list ${list.name}?`}
      description={
        <p>
          Its {formatNumber(list.memberCount)} {list.memberCount === 1 ? "contact leaves" : "contacts leave"} the list and stay contacts. Writes that still name
          the list are refused (404) from now on. This cannot be undone.
        </p>
      }
      confirmLabel="Delete list"
      destructive
      onConfirm={async () => {
        await remove.mutateAsync({ id: list.id });
        await refresh();
      }}
    />
  );
}
