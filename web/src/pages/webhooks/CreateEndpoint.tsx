import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import { Link } from "react-router";
import { CreateWebhookEndpointRequestSchema, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { DialogDone, FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { SecretOnce } from "../../components/admin/SecretOnce.tsx";
import { webhookEventGroups } from "../../components/admin/webhook-events.ts";
import { choices, text } from "../../components/form/contract-rules.ts";
import { ChoicesField } from "../../components/form/ChoicesField.tsx";
import { Form, FormAlert, Submit, TextField, useContractForm } from "../../components/form/Form.tsx";

const GROUPS = webhookEventGroups().map((group) => ({ legend: group.name, options: group.events.map((value) => ({ value })) }));

/** "New endpoint": URL, description, events grouped by kind; then the secret, once. */
export function CreateEndpoint() {
  const [open, setOpen] = useState(false);
  const refresh = useRefresh(WebhooksService);
  const create = useMutation(WebhooksService.method.createWebhookEndpoint, { onSuccess: refresh });
  const form = useContractForm({
    request: CreateWebhookEndpointRequestSchema,
    fields: { url: text(), description: text(), events: choices("Choose at least one event.") },
    defaults: { url: "", description: "", events: [] },
    // The refusal of a private or internal host is about the URL.
    codeFields: { WEBHOOK_HOST_NOT_ALLOWED: "url" },
  });

  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) {
      form.reset();
      create.reset();
    }
  };
  return (
    <FormDialog label="New endpoint" title={create.isSuccess ? "Endpoint created" : "New webhook endpoint"} open={open} onOpenChange={openOrClose}>
      {create.isSuccess ? (
        <>
          <p>
            Deliveries to <span className="mono break">{create.data.endpoint?.url}</span> are signed with this secret.
          </p>
          <SecretOnce label="Signing secret" secret={create.data.secret} />
          <DialogDone onDone={() => openOrClose(false)}>
            <Link to={create.data.endpoint?.id ?? ""} onClick={() => openOrClose(false)}>
              Open the endpoint
            </Link>
          </DialogDone>
        </>
      ) : (
        <Form
          form={form}
          className="form"
          onSubmit={({ url, description, events }) => create.mutateAsync({ url, events, ...(description ? { description } : {}) })}
        >
          <TextField
            name="url"
            label="URL"
            type="url"
            placeholder="https://example.com/webhooks/mail"
            hint="https:// only, on a host that resolves to public internet addresses."
          />
          <TextField name="description" label="Description (optional)" />
          <ChoicesField name="events" legend="Events" groups={GROUPS} />
          <FormAlert />
          <div className="actions">
            <Submit pending="Creating…">Create endpoint</Submit>
          </div>
        </Form>
      )}
    </FormDialog>
  );
}
