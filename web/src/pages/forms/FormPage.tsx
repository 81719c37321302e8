import { Link, useNavigate, useParams } from "react-router";
import { useSession } from "../../app/auth/session.tsx";
import { errorMessage } from "../../app/errors.ts";
import { CopyBlock, CopyField } from "../../components/admin/CopyButton.tsx";
import { Fields } from "../../components/Fields.tsx";
import { type Column, ListTable } from "../../components/list/ListView.tsx";
import { Page } from "../../components/Page.tsx";
import type { FormField } from "@gen/mail/v1/mail_pb.js";
import { embedSnippet } from "./embed.ts";
import { DeactivateForm, SignupCount, useActiveForms } from "./FormList.tsx";
import { SIGNUP_DAYS, useRecentSignups } from "./signups.ts";

type FieldRow = FormField & { readonly id: string };

const FIELD_COLUMNS: readonly Column<FieldRow>[] = [
  { header: "Name", role: "title", cell: (field) => <span className="mono">{field.name}</span> },
  { header: "Label", cell: (field) => field.label },
  { header: "Type", cell: (field) => field.type },
  { header: "Required", cell: (field) => (field.required ? "yes" : "no") },
  { header: "Choices", cell: (field) => (field.options.length > 0 ? field.options.join(", ") : <span className="muted">—</span>) },
];

function Breadcrumb() {
  return (
    <nav aria-label="Breadcrumb" className="breadcrumb">
      <Link to="/forms">Sign-up forms</Link> / <span aria-current="page">Form</span>
    </nav>
  );
}

/** One active form: /admin/forms/:publicId. Its hosted page's address and an HTML snippet to copy, its design, and (administrators) deactivation. */
export function FormPage() {
  const { publicId = "" } = useParams();
  const { isAdmin } = useSession();
  const navigate = useNavigate();
  const forms = useActiveForms();
  const { counts } = useRecentSignups();
  if (forms.pending) return <p role="status">Loading the form…</p>;
  if (forms.error !== undefined) {
    return (
      <Page before={<Breadcrumb />} title="The form could not be read">
        <p role="alert">{errorMessage(forms.error)}</p>
      </Page>
    );
  }
  const form = forms.items.find((f) => f.publicId === publicId);
  if (!form) {
    return (
      <Page before={<Breadcrumb />} title="Form not found">
        <p role="alert">Your company has no active form with this id (a deactivated form is not shown).</p>
      </Page>
    );
  }
  return (
    <Page before={<Breadcrumb />} title={form.name}>
      <Fields
        items={[
          { label: `Sign-ups, last ${SIGNUP_DAYS} days`, value: <SignupCount counts={counts} publicId={form.publicId} /> },
          { label: "Opt-in", value: form.doubleOptIn ? "double: a new address confirms from an email" : "single: a sign-up subscribes at once" },
          { label: "Language", value: form.language, mono: true },
          { label: "Public id", value: form.publicId, mono: true },
          { label: "Consent text", value: form.consentText },
        ]}
      />
      <section aria-labelledby="hosted-title" className="panel">
        <h2 id="hosted-title">Hosted page</h2>
        <CopyField label="Hosted page address" value={form.url} />
        <p>
          <a href={form.url} target="_blank" rel="noopener noreferrer">
            Open the hosted page
          </a>
        </p>
      </section>
      <section aria-labelledby="embed-title" className="panel">
        <h2 id="embed-title">On your site</h2>
        <p>
          Put this on your site: its button opens the hosted page. The page cannot be shown inside another site (a frame), and each sign-up carries a
          one-time token the page itself issues, so visitors sign up there.
        </p>
        <CopyBlock label="HTML snippet" value={embedSnippet(form)} />
      </section>
      <section aria-labelledby="fields-title">
        <h2 id="fields-title">Fields</h2>
        <ListTable label="Fields of the form" columns={FIELD_COLUMNS} items={form.fields.map((field) => ({ ...field, id: field.name }))} rowKey={(field) => field.id} />
      </section>
      {isAdmin ? (
        <section aria-labelledby="deactivate-title" className="panel">
          <h2 id="deactivate-title">Deactivate</h2>
          <p>The hosted page stops taking sign-ups; contacts the form brought stay.</p>
          <DeactivateForm form={form} onDone={() => void navigate("/forms")} />
        </section>
      ) : null}
    </Page>
  );
}
