import { useMutation } from "@connectrpc/connect-query";
import { useId, useState } from "react";
import { type WebhookEndpoint, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { errorMessage } from "../../app/errors.ts";
import { DateTime, formatNumber } from "../../app/format.tsx";
import { JsonBlock } from "../../components/admin/JsonBlock.tsx";
import { WEBHOOK_EVENTS } from "../../components/admin/webhook-events.ts";
import { Outcome } from "../../components/admin/delivery-states.tsx";

/** Delivers a signed example of a chosen event now and shows the attempt's result. */
export function SendTestEvent({ endpoint }: { endpoint: WebhookEndpoint }) {
  const id = useId();
  const [event, setEvent] = useState(endpoint.events[0] ?? WEBHOOK_EVENTS[0] ?? "");
  const send = useMutation(WebhooksService.method.sendTestWebhookEvent);
  const result = send.data;
  return (
    <section aria-labelledby={`${id}-title`} className="admin-panel">
      <h2 id={`${id}-title`}>Send a test event</h2>
      <p>Delivers a signed example now, outside the schedule; nothing is recorded or retried. Its data carries <code>"test": true</code>.</p>
      <form
        className="admin-inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          send.mutate({ id: endpoint.id, event });
        }}
      >
        <div className="admin-field">
          <label htmlFor={`${id}-event`}>Event</label>
          <select id={`${id}-event`} value={event} onChange={(e) => setEvent(e.target.value)}>
            {WEBHOOK_EVENTS.map((name) => (
              <option key={name} value={name}>
                {name}
                {endpoint.events.includes(name) ? "" : " (not subscribed)"}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" disabled={send.isPending}>
          {send.isPending ? "Sending…" : "Send test event"}
        </button>
      </form>
      <div aria-live="polite">
        {send.isError ? (
          <p role="alert" className="admin-error">
            {errorMessage(send.error)}
          </p>
        ) : result ? (
          <div className="admin-test-result" data-testid="test-event-result">
            <p className={result.succeeded ? "admin-ok" : "admin-error"}>
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
