import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useMutation } from "@connectrpc/connect-query";
import { useId, useState } from "react";
import { type WebhookEndpoint, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { ConfirmAction } from "../../components/admin/ConfirmAction.tsx";
import { errorMessage } from "../../app/errors.ts";
import { DateTime, formatNumber, fromLocalInput, toLocalInput } from "../../app/format.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";

/** "Retry every dead letter of this endpoint since …": count first (a dry run), then confirm the count. */
export function RetryDeadLetters({ endpoint }: { endpoint: WebhookEndpoint }) {
  const id = useId();
  const [since, setSince] = useState(() => toLocalInput(new Date(Date.now() - 24 * 3_600_000)));
  const [counted, setCounted] = useState<{ since: Date; count: number } | undefined>(undefined);
  const [retried, setRetried] = useState<number | undefined>(undefined);
  const refresh = useRefresh(WebhooksService);
  const count = useMutation(WebhooksService.method.retryWebhookDeadLetters);
  const retry = useMutation(WebhooksService.method.retryWebhookDeadLetters);
  const sinceDate = fromLocalInput(since);
  return (
    <section aria-labelledby={`${id}-title`} className="admin-panel">
      <h2 id={`${id}-title`}>Retry dead letters</h2>
      <p>Puts every dead-lettered delivery of this endpoint created since the chosen time back into attempting.</p>
      <form
        className="admin-inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!sinceDate) return;
          setRetried(undefined);
          count.mutate(
            { id: endpoint.id, since: timestampFromDate(sinceDate), dryRun: true },
            { onSuccess: (answer) => setCounted({ since: sinceDate, count: answer.deadLetters }) },
          );
        }}
      >
        <div className="admin-field">
          <label htmlFor={`${id}-since`}>Since (your local time)</label>
          <input
            id={`${id}-since`}
            type="datetime-local"
            required
            value={since}
            onChange={(e) => {
              setSince(e.target.value);
              setCounted(undefined);
            }}
          />
        </div>
        <button type="submit" disabled={!sinceDate || count.isPending}>
          {count.isPending ? "Counting…" : "Count dead letters"}
        </button>
      </form>
      <div aria-live="polite">
        {count.isError ? (
          <p role="alert" className="admin-error">
            {errorMessage(count.error)}
          </p>
        ) : null}
        {counted ? (
          <div className="admin-inline-form">
            <p>
              {formatNumber(counted.count)} dead {counted.count === 1 ? "letter" : "letters"} since <DateTime value={counted.since} />.
            </p>
            {counted.count > 0 ? (
              <ConfirmAction
                label={`Retry ${formatNumber(counted.count)}`}
                title={`Retry ${formatNumber(counted.count)} dead ${counted.count === 1 ? "letter" : "letters"}?`}
                description={<p>Each gets up to 5 new attempts on the usual schedule, numbered on from its last one.</p>}
                confirmLabel="Retry"
                onConfirm={async () => {
                  const answer = await retry.mutateAsync({ id: endpoint.id, since: timestampFromDate(counted.since) });
                  setRetried(answer.retried);
                  setCounted(undefined);
                  await refresh();
                }}
              />
            ) : null}
          </div>
        ) : null}
        {retried !== undefined ? <p role="status">{formatNumber(retried)} put back into attempting.</p> : null}
      </div>
    </section>
  );
}
