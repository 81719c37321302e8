import { useMutation, useQuery } from "@connectrpc/connect-query";
import { type Template, TemplatesService } from "@gen/mail/v1/templates_pb.js";
import { useId, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { useSession } from "../../app/auth/session.tsx";
import { errorMessage, isNotFound } from "../../app/errors.ts";
import { ConfirmAction } from "../../components/admin/ConfirmAction.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { Page } from "../../components/Page.tsx";
import { HtmlEditor } from "./HtmlEditor.tsx";
import { RenderedPreview, usePreview } from "./preview.tsx";
import { TemplateVersions } from "./TemplateVersions.tsx";

/** What the editor holds: the template's parts as typed, saved or not. */
interface Draft {
  readonly name: string;
  readonly subject: string;
  readonly html: string;
  readonly text: string;
}

const NEW_TEMPLATE: Draft = {
  name: "",
  subject: "Your order {{ orderId }}",
  html: "<h1>Thank you, {{ firstName | default:there }}!</h1>\n<p>Your order {{ orderId }} is confirmed.</p>\n",
  text: "",
};

function draftOf(template: Template): Draft {
  return { name: template.name, subject: template.subject, html: template.html, text: template.text ?? "" };
}

function Breadcrumb({ current }: { current: string }) {
  return (
    <nav aria-label="Breadcrumb" className="breadcrumb">
      <Link to="/templates">Templates</Link> / <span aria-current="page">{current}</span>
    </nav>
  );
}

/** /admin/templates/:templateId (or /new): the editor of one template, with its preview, versions and test send. */
export function TemplateEditor() {
  const { templateId } = useParams();
  const query = useQuery(TemplatesService.method.getTemplate, { name: templateId ?? "" }, { enabled: templateId !== undefined });
  if (templateId === undefined) return <Editor key="new" />;
  if (query.isPending) return <p role="status">Loading the template…</p>;
  if (query.isError) {
    return (
      <Page before={<Breadcrumb current="Template" />} title={isNotFound(query.error) ? "Template not found" : "The template could not be read"}>
        <p role="alert">{isNotFound(query.error) ? "Your company has no template with this id." : errorMessage(query.error)}</p>
      </Page>
    );
  }
  const template = query.data.template;
  // A new key after a restore or a save elsewhere: the editor starts from the stored content again.
  return template ? <Editor key={`${template.id}:${template.version}`} template={template} /> : null;
}

function Editor({ template }: { template?: Template }) {
  const { isAdmin } = useSession();
  const navigate = useNavigate();
  const refresh = useRefresh(TemplatesService);
  const ids = { name: useId(), subject: useId(), text: useId(), html: useId() };
  const saved = template ? draftOf(template) : NEW_TEMPLATE;
  const [draft, setDraft] = useState<Draft>(saved);
  const [samples, setSamples] = useState<Record<string, string>>({});
  const dirty = draft.name !== saved.name || draft.subject !== saved.subject || draft.html !== saved.html || draft.text !== saved.text || !template;
  const save = useMutation(TemplatesService.method.putTemplate);
  const remove = useMutation(TemplatesService.method.deleteTemplate);
  const readOnly = !isAdmin;
  const set = (part: keyof Draft) => (value: string) => setDraft((current) => ({ ...current, [part]: value }));

  const onSave = async () => {
    const answer = await save.mutateAsync({ name: draft.name, subject: draft.subject, html: draft.html, ...(draft.text !== "" ? { text: draft.text } : {}) });
    await refresh();
    if (answer.template && answer.template.id !== template?.id) await navigate(`/templates/${answer.template.id}`);
  };

  return (
    <Page
      before={<Breadcrumb current={template?.name ?? "New template"} />}
      title={template ? template.name : "New template"}
      titleClass="mono"
      actions={
        template && isAdmin ? (
          <ConfirmAction
            label="Delete"
            ariaLabel={`Delete ${template.name}`}
            title={`Delete the template ${template.name}?`}
            description={<p>Its versions go with it. Sends that name it are refused (404) from now on; messages already sent keep their content.</p>}
            confirmLabel="Delete template"
            destructive
            onConfirm={async () => {
              await remove.mutateAsync({ name: template.id });
              await refresh();
              await navigate("/templates");
            }}
          />
        ) : undefined
      }
    >
      {readOnly ? <p className="hint">You can read and preview templates; owners and admins change them.</p> : null}
      <div className="template-editor">
        <section className="template-source" aria-label="Template">
          <form
            className="form"
            onSubmit={(event) => {
              event.preventDefault();
              void onSave().catch(() => undefined);
            }}
          >
            {template ? null : (
              <div className="field">
                <label htmlFor={ids.name}>Name</label>
                <p className="hint">A send names the template by this name or by its id; a name cannot change later.</p>
                <input id={ids.name} value={draft.name} onChange={(event) => set("name")(event.target.value)} autoComplete="off" required maxLength={200} />
              </div>
            )}
            <div className="field">
              <label htmlFor={ids.subject}>Subject</label>
              <input id={ids.subject} value={draft.subject} onChange={(event) => set("subject")(event.target.value)} readOnly={readOnly} autoComplete="off" maxLength={500} />
            </div>
            <div className="field">
              <span className="field-label" id={ids.html}>
                HTML
              </span>
              <HtmlEditor label="HTML" value={saved.html} resetKey={template ? `${template.id}:${template.version}` : "new"} readOnly={readOnly} onChange={set("html")} />
            </div>
            <div className="field">
              <label htmlFor={ids.text}>Text version (optional)</label>
              <textarea id={ids.text} rows={4} value={draft.text} onChange={(event) => set("text")(event.target.value)} readOnly={readOnly} />
            </div>
            {save.isError ? (
              <p role="alert" className="error">
                {errorMessage(save.error)}
              </p>
            ) : null}
            {isAdmin ? (
              <div className="actions">
                <button type="submit" className="button button-primary" disabled={save.isPending || !dirty}>
                  {save.isPending ? "Saving…" : template ? "Save as a new version" : "Create template"}
                </button>
                {template && !dirty ? <span className="muted">Saved (version {template.version}).</span> : null}
              </div>
            ) : null}
          </form>
        </section>
        <Preview draft={draft} samples={samples} onSample={(name, value) => setSamples((current) => ({ ...current, [name]: value }))} />
      </div>
      {template && isAdmin ? <SendTest template={template} samples={samples} dirty={dirty} /> : null}
      {template ? <TemplateVersions template={template} /> : null}
    </Page>
  );
}

/**
 * The live preview: the server renders the draft with the sample values
 * through the send's own renderer and sanitiser (PreviewTemplate), so what
 * shows is what a send would store. The HTML is shown in a sandboxed frame
 * (sandbox="": no scripts, no same-origin, no forms); the variables the
 * template uses each get an input for a sample value.
 */
function Preview(props: { draft: Draft; samples: Record<string, string>; onSample: (name: string, value: string) => void }) {
  const preview = usePreview({
    subject: props.draft.subject,
    html: props.draft.html,
    ...(props.draft.text !== "" ? { text: props.draft.text } : {}),
    variables: props.samples,
  });
  const data = preview.data;
  return (
    <section className="template-preview" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview</h2>
      {data && data.variables.length > 0 ? (
        <fieldset className="sample-values">
          <legend>Sample values</legend>
          {data.variables.map((name) => (
            <SampleInput key={name} name={name} value={props.samples[name] ?? ""} onChange={(value) => props.onSample(name, value)} />
          ))}
        </fieldset>
      ) : data ? (
        <p className="muted">The template uses no variables.</p>
      ) : null}
      {preview.isError ? (
        <p role="alert" className="error">
          {errorMessage(preview.error)}
        </p>
      ) : null}
      {data ? (
        <RenderedPreview data={data} />
      ) : preview.isPending ? (
        <p role="status">Rendering the preview…</p>
      ) : null}
    </section>
  );
}

function SampleInput({ name, value, onChange }: { name: string; value: string; onChange: (value: string) => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id} className="mono">
        {name}
      </label>
      <input id={id} value={value} onChange={(event) => onChange(event.target.value)} autoComplete="off" />
    </div>
  );
}

/** "Send a test": the saved template, with the sample values, to the member's own address (a normal, charged message). */
function SendTest({ template, samples, dirty }: { template: Template; samples: Record<string, string>; dirty: boolean }) {
  const { session } = useSession();
  const send = useMutation(TemplatesService.method.sendTestTemplate);
  const address = session.member?.email ?? "";
  return (
    <section className="panel" aria-labelledby="test-title">
      <h2 id="test-title">Send a test</h2>
      <p>
        Sends the saved template with the sample values to your own address, <span className="mono">{address}</span>, as a normal message: it is
        charged one credit and shows in the message log.
      </p>
      <div className="actions actions-start">
        <button type="button" className="button" disabled={send.isPending || dirty} onClick={() => send.mutate({ templateId: template.id, variables: samples })}>
          {send.isPending ? "Sending…" : "Send a test to me"}
        </button>
        {dirty ? <span className="muted">Save first: a test sends the saved template.</span> : null}
      </div>
      {send.isError ? (
        <p role="alert" className="error">
          {errorMessage(send.error)}
        </p>
      ) : null}
      {send.data ? (
        <p role="status">
          Sent to <span className="mono">{send.data.to}</span>: <Link to={`/messages/${send.data.messageId}`}>the message</Link>.
        </p>
      ) : null}
    </section>
  );
}
