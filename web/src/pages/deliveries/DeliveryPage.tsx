import { useMutation, useQuery } from "@connectrpc/connect-query";
import { Link, useParams } from "react-router";
import { WebhookDeliveryState, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { errorCode, errorMessage } from "../../app/errors.ts";
import { DateTime, formatNumber } from "../../app/format.tsx";
import { JsonBlock } from "../../components/admin/JsonBlock.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { lastOutcome, Outcome, StateBadge } from "../../components/admin/delivery-states.tsx";

const LIVE = new Set([WebhookDeliveryState.PENDING, WebhookDeliveryState.ATTEMPTING]);

/** One delivery: /admin/deliveries/:id, every attempt, and the retry of a dead letter. */
export function DeliveryPage() {
  const { id = "" } = useParams();
  const refresh = useRefresh(WebhooksService);
  const delivery = useQuery(
    WebhooksService.method.getWebhookDelivery,
    { id },
    {
      retry: false,
      // While attempts are under way the page follows them.
      refetchInterval: (query) => (query.state.data?.delivery && LIVE.has(query.state.data.delivery.state) ? 2_000 : false),
    },
  );
  const endpointId = delivery.data?.delivery?.endpointId ?? "";
  const endpoint = useQuery(WebhooksService.method.getWebhookEndpoint, { id: endpointId }, { enabled: endpointId !== "", retry: false });
  const retry = useMutation(WebhooksService.method.retryWebhookDelivery, { onSuccess: refresh });

  if (delivery.isPending) return <p role="status">Loading the delivery…</p>;
  if (delivery.isError) {
    return (
      <section className="admin-page" aria-labelledby="delivery-title">
        <h1 id="delivery-title">Delivery</h1>
        <p role="alert" className="admin-error">
          {errorCode(delivery.error) === "NOT_FOUND" ? "No delivery with this id in your company." : errorMessage(delivery.error)}
        </p>
        <Link to="/deliveries">Back to the deliveries</Link>
      </section>
    );
  }
  const d = delivery.data.delivery;
  if (!d) return null;
  return (
    <section className="admin-page" aria-labelledby="delivery-title">
      <nav aria-label="Breadcrumb" className="admin-breadcrumb">
        <Link to="/deliveries">Deliveries</Link> / <span aria-current="page">Delivery</span>
      </nav>
      <header className="admin-page-header">
        <h1 id="delivery-title">
          Delivery of <span className="admin-mono">{d.event}</span>
        </h1>
        {d.state === WebhookDeliveryState.DEAD_LETTER ? (
          <button type="button" className="admin-primary" disabled={retry.isPending} onClick={() => retry.mutate({ id: d.id })}>
            {retry.isPending ? "Retrying…" : "Retry delivery"}
          </button>
        ) : null}
      </header>
      {retry.isSuccess ? (
        <p role="status">Retry started: up to 5 new attempts, numbered on from the last one.</p>
      ) : retry.isError ? (
        <p role="alert" className="admin-error">
          {errorMessage(retry.error)}
        </p>
      ) : null}
      <dl className="admin-details">
        <dt>State</dt>
        <dd>
          <StateBadge state={d.state} />
        </dd>
        <dt>Delivery id</dt>
        <dd className="admin-mono">{d.id}</dd>
        <dt>Endpoint</dt>
        <dd>
          <Link to={`/webhooks/${encodeURIComponent(d.endpointId)}`} className="admin-mono admin-break">
            {endpoint.data?.endpoint?.url ?? d.endpointId}
          </Link>
        </dd>
        <dt>Event occurred</dt>
        <dd>
          <DateTime value={d.occurredAt} />
        </dd>
        <dt>Created</dt>
        <dd>
          <DateTime value={d.createdAt} />
        </dd>
        <dt>Attempts</dt>
        <dd>{formatNumber(d.attemptCount)}</dd>
        <dt>Last attempt</dt>
        <dd>
          {lastOutcome(d)} <DateTime value={d.lastAttemptAt} empty="" />
        </dd>
        <dt>Next attempt</dt>
        <dd>
          <DateTime value={d.nextAttemptAt} empty="none scheduled" />
        </dd>
      </dl>

      <h2>Body as sent</h2>
      <p className="admin-hint">The exact JSON every attempt signs; retries send it unchanged.</p>
      <JsonBlock text={delivery.data.body} label="Delivery body as sent" />

      <h2 id="attempts-title">Attempts</h2>
      {delivery.data.attempts.length === 0 ? (
        <p>No attempt yet.</p>
      ) : (
        <div className="admin-table-wrap" tabIndex={0} role="region" aria-labelledby="attempts-title">
          <table className="admin-table">
            <thead>
              <tr>
                <th scope="col">Attempt</th>
                <th scope="col">Time</th>
                <th scope="col">Result</th>
                <th scope="col">Duration</th>
              </tr>
            </thead>
            <tbody>
              {delivery.data.attempts.map((a) => (
                <tr key={a.number}>
                  <th scope="row">{formatNumber(a.number)}</th>
                  <td>
                    <DateTime value={a.attemptedAt} />
                  </td>
                  <td>
                    <Outcome status={a.status} error={a.error} />
                  </td>
                  <td>{formatNumber(a.durationMs, { style: "unit", unit: "millisecond", unitDisplay: "short" })}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p className="admin-hint">Only the HTTP status of each attempt is recorded, never the response body.</p>
    </section>
  );
}
