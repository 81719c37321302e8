import { type WebhookDelivery, WebhookDeliveryState } from "@gen/mail/v1/webhooks_pb.js";
import { formatNumber } from "../../app/format.tsx";

/** The delivery states by their public names (the REST form), for the filter and the badges. */
export const STATES: readonly { state: WebhookDeliveryState; name: string }[] = [
  { state: WebhookDeliveryState.PENDING, name: "pending" },
  { state: WebhookDeliveryState.ATTEMPTING, name: "attempting" },
  { state: WebhookDeliveryState.SUCCEEDED, name: "succeeded" },
  { state: WebhookDeliveryState.DEAD_LETTER, name: "dead_letter" },
];

export function stateName(state: WebhookDeliveryState): string {
  return STATES.find((s) => s.state === state)?.name ?? "—";
}

export function StateBadge({ state }: { state: WebhookDeliveryState }) {
  const name = stateName(state);
  return <span className={`admin-badge admin-badge-${name}`}>{name.replace("_", " ")}</span>;
}

/** What the latest attempt got: an HTTP status or an error class; never a response body. */
export function Outcome({ status, error }: { status: number | undefined; error: string | undefined }) {
  if (status !== undefined) return <span className="admin-mono">HTTP {formatNumber(status, { useGrouping: false })}</span>;
  if (error) return <span className="admin-mono">{error}</span>;
  return <span className="admin-muted">—</span>;
}

export function lastOutcome(delivery: WebhookDelivery) {
  return <Outcome status={delivery.lastStatus} error={delivery.lastError} />;
}
