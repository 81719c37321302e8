import { Link } from "react-router";
import { type WebhookEndpoint, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { DateTime } from "../../app/format.tsx";
import { Words } from "../../components/admin/Words.tsx";
import { type Column, ListView, titleLink } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";
import { CreateEndpoint } from "./CreateEndpoint.tsx";
import { EnabledSwitch } from "./EnabledSwitch.tsx";
import { Health } from "./Health.tsx";

const COLUMNS: readonly Column<WebhookEndpoint>[] = [
  titleLink("URL", (endpoint) => endpoint.url, { className: "mono break" }),
  { header: "Description", wide: true, cell: (endpoint) => endpoint.description ?? <span className="muted">—</span> },
  { header: "Events", cell: (endpoint) => <Words items={endpoint.events} /> },
  { header: "Enabled", cell: (endpoint) => <EnabledSwitch endpoint={endpoint} /> },
  { header: "Last 24 h", cell: (endpoint) => <Health endpoint={endpoint} /> },
  { header: "Created", cell: (endpoint) => <DateTime value={endpoint.createdAt} /> },
];

export function EndpointList() {
  const list = usePagedList(WebhooksService.method.listWebhookEndpoints, {});
  return (
    <Page title="Webhooks" actions={<CreateEndpoint />}>
      <p className="hint">
        Each endpoint receives the events it subscribed to, signed with its secret. <Link to="/deliveries">See every delivery</Link>.
      </p>
      <ListView list={list} label="Table of endpoints" noun="endpoints" columns={COLUMNS} empty="No endpoint yet. Create one to receive events." />
    </Page>
  );
}
