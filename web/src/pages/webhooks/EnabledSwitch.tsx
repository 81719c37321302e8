import { useMutation } from "@connectrpc/connect-query";
import { Switch } from "radix-ui";
import { useId } from "react";
import { type WebhookEndpoint, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { errorMessage } from "../../app/errors.ts";
import { useRefresh } from "../../components/admin/refresh.ts";

/** Enables or disables an endpoint (a Radix Switch, Space toggles it). */
export function EnabledSwitch({ endpoint, showLabel = false }: { endpoint: WebhookEndpoint; showLabel?: boolean }) {
  const id = useId();
  const refresh = useRefresh(WebhooksService);
  const update = useMutation(WebhooksService.method.updateWebhookEndpoint, { onSuccess: refresh });
  const checked = update.isPending ? (update.variables.enabled ?? endpoint.enabled) : endpoint.enabled;
  return (
    <span className="switch-field">
      <Switch.Root
        id={id}
        className="switch"
        checked={checked}
        disabled={update.isPending}
        aria-label={showLabel ? undefined : `Enabled: ${endpoint.url}`}
        onCheckedChange={(enabled) => update.mutate({ id: endpoint.id, enabled })}
      >
        <Switch.Thumb className="switch-thumb" />
      </Switch.Root>
      {showLabel ? <label htmlFor={id}>Enabled</label> : <span aria-hidden="true">{checked ? "On" : "Off"}</span>}
      {update.isError ? (
        <span role="alert" className="error">
          {errorMessage(update.error)}
        </span>
      ) : null}
    </span>
  );
}
