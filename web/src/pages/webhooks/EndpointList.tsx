import { useQuery } from "@connectrpc/connect-query";
import { Link } from "react-router";
import { WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { errorMessage } from "../../app/errors.ts";
import { Words } from "../../components/admin/Words.tsx";
import { DateTime } from "../../app/format.tsx";
import { CreateEndpoint } from "./CreateEndpoint.tsx";
import { EnabledSwitch } from "./EnabledSwitch.tsx";
import { Health } from "./Health.tsx";

export function EndpointList() {
  const endpoints = useQuery(WebhooksService.method.listWebhookEndpoints, {});
  return (
    <section className="admin-page" aria-labelledby="webhooks-title">
      <header className="admin-page-header">
        <h1 id="webhooks-title">Webhooks</h1>
        <CreateEndpoint />
      </header>
      <p className="admin-hint">
        Each endpoint receives the events it subscribed to, signed with its secret. <Link to="/deliveries">See every delivery</Link>.
      </p>
      {endpoints.isPending ? (
        <p role="status">Loading endpoints…</p>
      ) : endpoints.isError ? (
        <p role="alert" className="admin-error">
          {errorMessage(endpoints.error)}
        </p>
      ) : endpoints.data.items.length === 0 ? (
        <p>No endpoint yet. Create one to receive events.</p>
      ) : (
        <div className="admin-table-wrap" tabIndex={0} role="region" aria-label="Table of endpoints">
          <table className="admin-table">
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Description</th>
                <th scope="col">Events</th>
                <th scope="col">Enabled</th>
                <th scope="col">Last 24 h</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {endpoints.data.items.map((endpoint) => (
                <tr key={endpoint.id}>
                  <td>
                    <Link to={endpoint.id} className="admin-mono admin-break">
                      {endpoint.url}
                    </Link>
                  </td>
                  <td>{endpoint.description ?? <span className="admin-muted">—</span>}</td>
                  <td>
                    <Words items={endpoint.events} />
                  </td>
                  <td>
                    <EnabledSwitch endpoint={endpoint} />
                  </td>
                  <td>
                    <Health endpoint={endpoint} />
                  </td>
                  <td>
                    <DateTime value={endpoint.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
