import { useMutation } from "@connectrpc/connect-query";
import { useId } from "react";
import { SendTestWebhookEventRequestSchema, type WebhookEndpoint, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { DateTime, formatNumber } from "../../app/format.tsx";
import { Outcome } from "../../components/admin/delivery-states.tsx";
import { JsonBlock } from "../../components/admin/JsonBlock.tsx";
import { WEBHOOK_EVENTS } from "../../components/admin/webhook-events.ts";
import { choice } from "../../components/form/contract-rules.ts";
import { Form, FormAlert, SelectField, Submit, useContractForm } from "../../components/form/Form.tsx";

/** Delivers a signed example of a chosen event now and shows the attempt's result. */
export function SendTestEvent({ endpoint }: { endpoint: WebhookEndpoint }) {
  const id = useId();
  const send = useMutation(WebhooksService.method.sendTestWebhookEvent);
  const form = useContractForm({
    request: SendTestWebhookEventRequestSchema,
    fields: { event: choice() },
    defaults: { event: endpoint.events[0] ?? WEBHOOK_EVENTS[0] ?? "" },
  });
  const result = send.data;
  return (
    <section aria-labelledby={`${id}-title`} className="panel">
      <h2 id={`${id}-title`}>Send a test event</h2>
      <p>Delivers a signed example now, outside the schedule; nothing is recorded or retried. Its data carries <code>"test": true</code>.</p>
      <Form form={form} className="form-inline" onSubmit={({ event }) => send.mutateAsync({ id: endpoint.id, event })}>
        <SelectField
          name="event"
          label="Event"
          options={WEBHOOK_EVENTS.map((name) => ({ value: name, label: endpoint.events.includes(name) ? name : `${name} (not subscribed)` }))}
        />
        <div className="actions">
          <Submit pending="Sending…" className="button">
            Send test event
          </Submit>
        </div>
        <FormAlert />
      </Form>
      <div aria-live="polite">
        {result && !send.isError ? (
          <div data-testid="test-event-result">
            <p className={result.succeeded ? "ok" : "error"}>
              {result.succeeded ? "Delivered" : "Not delivered"}: <Outcome status={result.status} error={result.error} /> in{" "}
              {formatNumber(result.durationMs, { style: "unit", unit: "millisecond", unitDisplay: "short" })}, <DateTime value={result.attemptedAt} />.
            </p>
            <details>
              <summary>Body as sent</summary>
              <JsonBlock text={result.body} label="Test event body as sent" />
            </details>
          </div>
        ) : null}
      </div>
    </section>
  );
}
