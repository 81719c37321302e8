import type { WebhookEndpoint } from "@gen/mail/v1/webhooks_pb.js";
import { formatNumber } from "../../app/format.tsx";

/** Deliveries and success rate over the last 24 hours. */
export function Health({ endpoint }: { endpoint: WebhookEndpoint }) {
  const health = endpoint.health;
  if (!health || health.deliveries === 0) return <span className="muted">no deliveries</span>;
  const rate = health.successRate;
  const low = rate !== undefined && rate < 0.9;
  return (
    <span className={low ? "error" : undefined}>
      {formatNumber(health.deliveries)} {health.deliveries === 1 ? "delivery" : "deliveries"}
      {rate !== undefined ? <>, {formatNumber(rate, { style: "percent", maximumFractionDigits: 1 })} succeeded</> : null}
    </span>
  );
}
