import { useQuery } from "@connectrpc/connect-query";
import { WebhookDeliveryState, WebhookDeliveryStateSchema, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { Link } from "react-router";
import { errorMessage } from "../../app/errors.ts";
import { DateTime, formatNumber } from "../../app/format.tsx";

function stateName(state: WebhookDeliveryState): string {
  const value = WebhookDeliveryStateSchema.values.find((v) => v.number === state);
  return value ? value.name.replace(/^WEBHOOK_DELIVERY_STATE_/, "").toLowerCase().replace(/_/g, " ") : "unknown";
}

/** The webhook deliveries this message caused (Mail administrators; ListWebhookDeliveries by message id). */
export function MessageDeliveries({ messageId, live }: { messageId: string; live: boolean }) {
  const query = useQuery(WebhooksService.method.listWebhookDeliveries, { messageId, limit: 100 }, { refetchInterval: live ? 5_000 : false });
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Webhook deliveries</h2>
      {query.isPending ? (
        <p role="status">Loading deliveries…</p>
      ) : query.isError ? (
        <p role="alert" className="error">
          {errorMessage(query.error)}
        </p>
      ) : query.data.items.length === 0 ? (
        <p>This message caused no webhook delivery.</p>
      ) : (
        <div className="table-wrap" role="region" aria-label="Webhook deliveries of this message" tabIndex={0}>
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">State</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Last result</th>
              </tr>
            </thead>
            <tbody>
              {query.data.items.map((delivery) => (
                <tr key={delivery.id}>
                  <td>
                    <Link to={`/deliveries/${delivery.id}`}>{delivery.event}</Link>
                  </td>
                  <td>
                    <span className={delivery.state === WebhookDeliveryState.SUCCEEDED ? "badge badge-ok" : delivery.state === WebhookDeliveryState.DEAD_LETTER ? "badge badge-bad" : "badge"}>
                      {stateName(delivery.state)}
                    </span>
                  </td>
                  <td>{formatNumber(delivery.attemptCount)}</td>
                  <td>
                    <DateTime value={delivery.lastAttemptAt} empty="none yet" />
                  </td>
                  <td>{delivery.lastStatus !== undefined ? `HTTP ${delivery.lastStatus}` : (delivery.lastError ?? "—")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
