import { type WebhookDelivery, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { DateTime, formatNumber } from "../../app/format.tsx";
import { lastOutcome, StateBadge } from "../../components/admin/delivery-states.tsx";
import { type Column, ListView, titleLink } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";

const COLUMNS: readonly Column<WebhookDelivery>[] = [
  titleLink("Event", (delivery) => delivery.event, { to: (delivery) => `/deliveries/${delivery.id}` }),
  { header: "State", cell: (delivery) => <StateBadge state={delivery.state} /> },
  { header: "Attempts", cell: (delivery) => formatNumber(delivery.attemptCount) },
  { header: "Last attempt", cell: (delivery) => <DateTime value={delivery.lastAttemptAt} empty="none yet" /> },
  { header: "Last result", cell: lastOutcome },
];

/** The webhook deliveries this message caused (Mail administrators; ListWebhookDeliveries by message id). */
export function MessageDeliveries({ messageId, live }: { messageId: string; live: boolean }) {
  const list = usePagedList(WebhooksService.method.listWebhookDeliveries, { messageId }, { refetchInterval: live ? 5_000 : false });
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Webhook deliveries</h2>
      <ListView list={list} label="Webhook deliveries of this message" noun="deliveries" columns={COLUMNS} empty="This message caused no webhook delivery." />
    </section>
  );
}
