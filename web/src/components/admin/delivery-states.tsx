import { type WebhookDelivery, WebhookDeliveryState, WebhookDeliveryStateSchema } from "@gen/mail/v1/webhooks_pb.js";
import { enumEntries, enumName } from "../../app/enums.ts";
import { formatNumber } from "../../app/format.tsx";

/** The delivery states by their public names (`dead_letter`, the REST form), for the filter and the badges. */
export const STATES = enumEntries<WebhookDeliveryState>(WebhookDeliveryStateSchema);

/** A state as words: `dead letter`. */
export function stateLabel(name: string): string {
  return name.replace(/_/g, " ");
}

const TONE: Partial<Record<WebhookDeliveryState, string>> = {
  [WebhookDeliveryState.SUCCEEDED]: "badge badge-ok",
  [WebhookDeliveryState.DEAD_LETTER]: "badge badge-bad",
};

export function StateBadge({ state }: { state: WebhookDeliveryState }) {
  return <span className={TONE[state] ?? "badge"}>{stateLabel(enumName(STATES, state))}</span>;
}

/** What the latest attempt got: an HTTP status or an error class; never a response body. */
export function Outcome({ status, error }: { status: number | undefined; error: string | undefined }) {
  if (status !== undefined) return <span className="mono">HTTP {formatNumber(status, { useGrouping: false })}</span>;
  if (error) return <span className="mono">{error}</span>;
  return <span className="muted">—</span>;
}

export function lastOutcome(delivery: WebhookDelivery) {
  return <Outcome status={delivery.lastStatus} error={delivery.lastError} />;
}
