import { useMutation } from "@connectrpc/connect-query";
import { useId, useState, type FormEvent } from "react";
import { Link } from "react-router";
import { WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { CheckboxGroup } from "../../components/admin/CheckboxGroup.tsx";
import { errorCode, errorMessage } from "../../app/errors.ts";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { SecretOnce } from "../../components/admin/SecretOnce.tsx";
import { webhookEventGroups } from "../../components/admin/webhook-events.ts";

const GROUPS = webhookEventGroups();

/** "New endpoint": URL, description, events grouped by kind; then the secret, once. */
export function CreateEndpoint() {
  const id = useId();
  const [open, setOpen] = useState(false);
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [events, setEvents] = useState<Set<string>>(new Set());
  const [noEvents, setNoEvents] = useState(false);
  const refresh = useRefresh(WebhooksService);
  const create = useMutation(WebhooksService.method.createWebhookEndpoint, { onSuccess: refresh });

  const reset = () => {
    setUrl("");
    setDescription("");
    setEvents(new Set());
    setNoEvents(false);
    create.reset();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (events.size === 0) {
      setNoEvents(true);
      return;
    }
    setNoEvents(false);
    create.mutate({ url: url.trim(), events: [...events], ...(description.trim() ? { description: description.trim() } : {}) });
  };
  const code = create.isError ? errorCode(create.error) : undefined;
  const urlRefused = code === "WEBHOOK_HOST_NOT_ALLOWED";

  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) reset();
  };
  return (
    <FormDialog
      label="New endpoint"
      title={create.isSuccess ? "Endpoint created" : "New webhook endpoint"}
      open={open}
      onOpenChange={openOrClose}
    >
      {create.isSuccess ? (
        <>
          <p>
            Deliveries to <span className="admin-mono admin-break">{create.data.endpoint?.url}</span> are signed with this secret.
          </p>
          <SecretOnce label="Signing secret" secret={create.data.secret} />
          <div className="admin-actions">
            <Link to={create.data.endpoint?.id ?? ""} onClick={() => openOrClose(false)}>
              Open the endpoint
            </Link>
            <button type="button" className="admin-primary" onClick={() => openOrClose(false)}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form className="admin-form" onSubmit={submit} noValidate>
          <div className="admin-field">
            <label htmlFor={`${id}-url`}>URL</label>
            <input
              id={`${id}-url`}
              type="url"
              required
              maxLength={2048}
              placeholder="https://example.com/webhooks/mail"
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              aria-invalid={urlRefused}
              aria-describedby={`${id}-url-hint${urlRefused ? ` ${id}-url-error` : ""}`}
            />
            <p className="admin-hint" id={`${id}-url-hint`}>
              https:// only, on a host that resolves to public internet addresses.
            </p>
            {urlRefused ? (
              <p role="alert" className="admin-error" id={`${id}-url-error`}>
                {errorMessage(create.error)}
              </p>
            ) : null}
          </div>
          <div className="admin-field">
            <label htmlFor={`${id}-description`}>Description (optional)</label>
            <input id={`${id}-description`} maxLength={500} value={description} onChange={(e) => setDescription(e.target.value)} />
          </div>
          <div className="admin-event-groups">
            <p className="admin-label" id={`${id}-events`}>
              Events
            </p>
            {GROUPS.map((group) => (
              <CheckboxGroup
                key={group.name}
                legend={group.name}
                options={group.events.map((value) => ({ value }))}
                selected={events}
                onChange={setEvents}
                {...(noEvents ? { describedBy: `${id}-events-error` } : {})}
              />
            ))}
            {noEvents ? (
              <p role="alert" className="admin-error" id={`${id}-events-error`}>
                Choose at least one event.
              </p>
            ) : null}
          </div>
          {create.isError && !urlRefused ? (
            <p role="alert" className="admin-error">
              {errorMessage(create.error)}
            </p>
          ) : null}
          <div className="admin-actions">
            <button type="submit" className="admin-primary" disabled={create.isPending}>
              {create.isPending ? "Creating…" : "Create endpoint"}
            </button>
          </div>
        </form>
      )}
    </FormDialog>
  );
}
