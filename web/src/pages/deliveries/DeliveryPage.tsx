import { useMutation, useQuery } from "@connectrpc/connect-query";
import { Link, useParams } from "react-router";
import { type WebhookAttempt, WebhookDeliveryState, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { errorCode, errorMessage, problemText } from "../../app/errors.ts";
import { DateTime, formatNumber } from "../../app/format.tsx";
import { JsonBlock } from "../../components/admin/JsonBlock.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { lastOutcome, Outcome, StateBadge } from "../../components/admin/delivery-states.tsx";
import { Fields } from "../../components/Fields.tsx";
import { Page } from "../../components/Page.tsx";
import { type Column, ListTable } from "../../components/list/ListView.tsx";

const ATTEMPT_COLUMNS: readonly Column<WebhookAttempt>[] = [
  { header: "Attempt", role: "title", cell: (a) => formatNumber(a.number) },
  { header: "Time", cell: (a) => <DateTime value={a.attemptedAt} /> },
  { header: "Result", cell: (a) => <Outcome status={a.status} error={a.error} /> },
  { header: "Duration", cell: (a) => formatNumber(a.durationMs, { style: "unit", unit: "millisecond", unitDisplay: "short" }) },
];

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
      <Page title="Delivery">
        <p role="alert" className="error">
          {errorCode(delivery.error) === "NOT_FOUND" ? "No delivery with this id in your company." : errorMessage(delivery.error)}
        </p>
        <Link to="/deliveries">Back to the deliveries</Link>
      </Page>
    );
  }
  const d = delivery.data.delivery;
  if (!d) return null;
  return (
    <Page
      before={
        <nav aria-label="Breadcrumb" className="breadcrumb">
          <Link to="/deliveries">Deliveries</Link> / <span aria-current="page">Delivery</span>
        </nav>
      }
      title={
        <>
          Delivery of <span className="mono">{d.event}</span>
        </>
      }
      actions={
        d.state === WebhookDeliveryState.DEAD_LETTER ? (
          <button type="button" className="button button-primary" disabled={retry.isPending} onClick={() => retry.mutate({ id: d.id })}>
            {retry.isPending ? "Retrying…" : "Retry delivery"}
          </button>
        ) : null
      }
    >
      {retry.isSuccess ? (
        <p role="status">Retry started: up to 5 new attempts, numbered on from the last one.</p>
      ) : retry.isError ? (
        <p role="alert" className="error">
          {problemText(retry.error)}
        </p>
      ) : null}
      <Fields
        items={[
          { label: "State", value: <StateBadge state={d.state} /> },
          { label: "Delivery id", value: d.id, mono: true },
          {
            label: "Endpoint",
            value: (
              <Link to={`/webhooks/${encodeURIComponent(d.endpointId)}`} className="mono break">
                {endpoint.data?.endpoint?.url ?? d.endpointId}
              </Link>
            ),
          },
          { label: "Event occurred", value: <DateTime value={d.occurredAt} /> },
          { label: "Created", value: <DateTime value={d.createdAt} /> },
          { label: "Attempts", value: formatNumber(d.attemptCount) },
          {
            label: "Last attempt",
            value: (
              <>
                {lastOutcome(d)} <DateTime value={d.lastAttemptAt} empty="" />
              </>
            ),
          },
          { label: "Next attempt", value: <DateTime value={d.nextAttemptAt} empty="none scheduled" /> },
        ]}
      />

      <h2>Body as sent</h2>
      <p className="hint">The exact JSON every attempt signs; retries send it unchanged.</p>
      <JsonBlock text={delivery.data.body} label="Delivery body as sent" />

      <h2>Attempts</h2>
      {delivery.data.attempts.length === 0 ? <p>No attempt yet.</p> : <ListTable label="Attempts" columns={ATTEMPT_COLUMNS} items={delivery.data.attempts} rowKey={(a) => String(a.number)} />}
      <p className="hint">Only the HTTP status of each attempt is recorded, never the response body.</p>
    </Page>
  );
}
