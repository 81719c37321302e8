import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useMutation } from "@connectrpc/connect-query";
import { useId, useState } from "react";
import { useWatch } from "react-hook-form";
import { RetryWebhookDeadLettersRequestSchema, type WebhookEndpoint, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { DateTime, formatNumber, fromLocalInput, toLocalInput } from "../../app/format.tsx";
import { ConfirmAction } from "../../components/admin/ConfirmAction.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { localTime } from "../../components/form/contract-rules.ts";
import { Form, FormAlert, Submit, TextField, useContractForm } from "../../components/form/Form.tsx";

/** "Retry every dead letter of this endpoint since …": count first (a dry run), then confirm the count. */
export function RetryDeadLetters({ endpoint }: { endpoint: WebhookEndpoint }) {
  const id = useId();
  const [counted, setCounted] = useState<{ input: string; since: Date; count: number } | undefined>(undefined);
  const [retried, setRetried] = useState<number | undefined>(undefined);
  const refresh = useRefresh(WebhooksService);
  const count = useMutation(WebhooksService.method.retryWebhookDeadLetters);
  const retry = useMutation(WebhooksService.method.retryWebhookDeadLetters);
  const form = useContractForm({
    request: RetryWebhookDeadLettersRequestSchema,
    fields: { since: localTime() },
    defaults: { since: toLocalInput(new Date(Date.now() - 24 * 3_600_000)) },
  });
  // A count holds for the time it was made for: changing the time asks for a new count.
  const since = useWatch({ control: form.methods.control, name: "since" });
  const current = counted?.input === since ? counted : undefined;
  return (
    <section aria-labelledby={`${id}-title`} className="panel">
      <h2 id={`${id}-title`}>Retry dead letters</h2>
      <p>Puts every dead-lettered delivery of this endpoint created since the chosen time back into attempting.</p>
      <Form
        form={form}
        className="form-inline"
        onSubmit={async (values) => {
          const from = fromLocalInput(values.since);
          if (!from) return;
          setRetried(undefined);
          const answer = await count.mutateAsync({ id: endpoint.id, since: timestampFromDate(from), dryRun: true });
          setCounted({ input: values.since, since: from, count: answer.deadLetters });
        }}
      >
        <TextField name="since" label="Since (your local time)" type="datetime-local" />
        <div className="actions">
          <Submit pending="Counting…" className="button">
            Count dead letters
          </Submit>
        </div>
        <FormAlert />
      </Form>
      <div aria-live="polite">
        {current ? (
          <div className="form-inline">
            <p>
              {formatNumber(current.count)} dead {current.count === 1 ? "letter" : "letters"} since <DateTime value={current.since} />.
            </p>
            {current.count > 0 ? (
              <ConfirmAction
                label={`Retry ${formatNumber(current.count)}`}
                title={`Retry ${formatNumber(current.count)} dead ${current.count === 1 ? "letter" : "letters"}?`}
                description={<p>Each gets up to 5 new attempts on the usual schedule, numbered on from its last one.</p>}
                confirmLabel="Retry"
                onConfirm={async () => {
                  const answer = await retry.mutateAsync({ id: endpoint.id, since: timestampFromDate(current.since) });
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
