import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { type RotateWebhookSecretResponse, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { ConfirmAction } from "../../components/admin/ConfirmAction.tsx";
import { errorCode, errorMessage } from "../../app/errors.ts";
import { DateTime } from "../../app/format.tsx";
import { Fields } from "../../components/Fields.tsx";
import { Page } from "../../components/Page.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { SecretOnce } from "../../components/admin/SecretOnce.tsx";
import { EnabledSwitch } from "./EnabledSwitch.tsx";
import { Health } from "./Health.tsx";
import { RetryDeadLetters } from "./RetryDeadLetters.tsx";
import { SendTestEvent } from "./SendTestEvent.tsx";

/** One endpoint: /admin/webhooks/:id. */
export function EndpointPage() {
  const { id = "" } = useParams();
  const navigate = useNavigate();
  const refresh = useRefresh(WebhooksService);
  const queries = useQueryClient();
  // Once deleted, never asked for again: a refresh or a re-render while the navigation away is under way would get a 404.
  const [deleted, setDeleted] = useState(false);
  const endpoint = useQuery(WebhooksService.method.getWebhookEndpoint, { id }, { retry: false, enabled: !deleted });
  const rotate = useMutation(WebhooksService.method.rotateWebhookSecret);
  const remove = useMutation(WebhooksService.method.deleteWebhookEndpoint);
  const [rotated, setRotated] = useState<RotateWebhookSecretResponse | undefined>(undefined);

  if (endpoint.isPending) return <p role="status">Loading the endpoint…</p>;
  if (endpoint.isError) {
    return (
      <Page title="Webhook endpoint">
        <p role="alert" className="error">
          {errorCode(endpoint.error) === "NOT_FOUND" ? "No endpoint with this id in your company." : errorMessage(endpoint.error)}
        </p>
        <Link to="/webhooks">Back to the endpoints</Link>
      </Page>
    );
  }
  const e = endpoint.data.endpoint;
  if (!e) return null;

  return (
    <Page
      before={
        <nav aria-label="Breadcrumb" className="breadcrumb">
          <Link to="/webhooks">Webhooks</Link> / <span aria-current="page">Endpoint</span>
        </nav>
      }
      title={e.url}
      titleClass="title-url"
    >
      <Fields
        items={[
          { label: "Description", value: e.description ?? <span className="muted">—</span> },
          { label: "Events", value: e.events.join(", ") },
          { label: "State", value: <EnabledSwitch endpoint={e} showLabel /> },
          { label: "Last 24 hours", value: <Health endpoint={e} /> },
          { label: "Created", value: <DateTime value={e.createdAt} /> },
          { label: "Updated", value: <DateTime value={e.updatedAt} /> },
          {
            label: "Previous secret",
            value: e.previousSecretExpiresAt ? (
              <>
                signs until <DateTime value={e.previousSecretExpiresAt} />
              </>
            ) : (
              <span className="muted">none: one secret signs</span>
            ),
          },
        ]}
      />
      <p>
        <Link to={`/deliveries?endpoint=${encodeURIComponent(e.id)}`}>Deliveries to this endpoint</Link>
      </p>

      <section aria-labelledby="secret-title" className="panel">
        <h2 id="secret-title">Signing secret</h2>
        <p>Rotating issues a new secret, shown once. For 24 hours both the new and the previous secret sign every delivery; afterwards only the new one.</p>
        {rotated ? (
          <SecretOnce label="New signing secret" secret={rotated.secret}>
            {rotated.endpoint?.previousSecretExpiresAt ? (
              <p>
                The previous secret keeps signing until <DateTime value={rotated.endpoint.previousSecretExpiresAt} />.
              </p>
            ) : null}
          </SecretOnce>
        ) : null}
        <ConfirmAction
          label="Rotate secret"
          title="Rotate the signing secret?"
          description={<p>A new secret is issued and shown once. The current one keeps signing for 24 hours, so update your receiver within that time.</p>}
          confirmLabel="Rotate"
          onConfirm={async () => {
            setRotated(await rotate.mutateAsync({ id: e.id }));
            await refresh();
          }}
        />
      </section>

      <SendTestEvent endpoint={e} />
      <RetryDeadLetters endpoint={e} />

      <section aria-labelledby="danger-title" className="panel">
        <h2 id="danger-title">Delete</h2>
        <p>Deleting the endpoint removes its deliveries; deliveries under way stop.</p>
        <ConfirmAction
          label="Delete endpoint"
          title="Delete this endpoint?"
          description={
            <p>
              <span className="mono break">{e.url}</span> will receive no more events and its deliveries are deleted. This cannot be undone.
            </p>
          }
          confirmLabel="Delete"
          destructive
          onConfirm={async () => {
            await remove.mutateAsync({ id: e.id });
            setDeleted(true);
            await navigate("/webhooks");
            // Forget the deleted endpoint: refreshing the service's answers must not ask for it again.
            queries.removeQueries({ queryKey: createConnectQueryKey({ schema: WebhooksService.method.getWebhookEndpoint, input: { id: e.id }, cardinality: "finite" }) });
            await refresh();
          }}
        />
      </section>
    </Page>
  );
}
