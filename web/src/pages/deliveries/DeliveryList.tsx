import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { Link, useSearchParams } from "react-router";
import { ListWebhookDeliveriesRequestSchema, type WebhookDelivery, type WebhookEndpoint, WebhooksService } from "@gen/mail/v1/webhooks_pb.js";
import { enumValue } from "../../app/enums.ts";
import { DateTime, formatNumber } from "../../app/format.tsx";
import { lastOutcome, STATES, StateBadge, stateLabel } from "../../components/admin/delivery-states.tsx";
import { WEBHOOK_EVENTS } from "../../components/admin/webhook-events.ts";
import { choice, localTime } from "../../components/form/contract-rules.ts";
import { Filters, filterParams, filtersIn, localInputOf } from "../../components/form/Filters.tsx";
import { SelectField, TextField, useContractForm } from "../../components/form/Form.tsx";
import { type Column, ListView, titleLink } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";

/** The filters of the list, read from the URL; `message` is set by links from a message's page (the deliveries it caused). */
function filtersOf(params: URLSearchParams) {
  return filtersIn(params, ["endpoint", "event", "state", "message"]);
}

function columns(urlOf: ReadonlyMap<string, string>): readonly Column<WebhookDelivery>[] {
  return [
    titleLink("Event", (d) => d.event, { className: "mono" }),
    { header: "Created", cell: (d) => <DateTime value={d.createdAt} /> },
    { header: "Endpoint", cell: (d) => <span className="mono break">{urlOf.get(d.endpointId) ?? d.endpointId}</span> },
    { header: "State", cell: (d) => <StateBadge state={d.state} /> },
    { header: "Attempts", cell: (d) => formatNumber(d.attemptCount) },
    { header: "Last attempt", cell: lastOutcome },
    { header: "Next attempt", cell: (d) => <DateTime value={d.nextAttemptAt} /> },
  ];
}

/**
 * Deliveries, newest first, filtered by endpoint, event, state and since
 * (all in the URL: a filtered view is a link). The list has no retry
 * control (spec); a dead letter is retried from its own page.
 */
export function DeliveryList() {
  const [params, setParams] = useSearchParams();
  const filters = filtersOf(params);
  const endpoints = useQuery(WebhooksService.method.listWebhookEndpoints, {});
  const urlOf = new Map((endpoints.data?.items ?? []).map((e) => [e.id, e.url]));
  const state = enumValue(STATES, filters.state);
  const list = usePagedList(WebhooksService.method.listWebhookDeliveries, {
    ...(filters.endpoint ? { endpointId: filters.endpoint } : {}),
    ...(filters.event ? { event: filters.event } : {}),
    ...(state !== undefined ? { state } : {}),
    ...(filters.since ? { since: timestampFromDate(filters.since) } : {}),
    ...(filters.message ? { messageId: filters.message } : {}),
  });

  return (
    <Page title="Deliveries">
      {filters.message ? (
        <p>
          Caused by the message <span className="mono break">{filters.message}</span>.{" "}
          <Link to={`/messages/${encodeURIComponent(filters.message)}`}>Open the message</Link>
        </p>
      ) : null}
      {/* Keyed by the URL, so back and forward show the filters of the view they return to. */}
      <DeliveryFilters key={params.toString()} params={params} endpoints={endpoints.data?.items} onApply={setParams} />
      <ListView
        list={list}
        label="Table of deliveries"
        noun="deliveries"
        columns={columns(urlOf)}
        rowProps={(d) => ({ "data-delivery-id": d.id })}
        empty="No delivery matches."
      />
    </Page>
  );
}

function DeliveryFilters({
  params,
  endpoints,
  onApply,
}: {
  params: URLSearchParams;
  endpoints: readonly WebhookEndpoint[] | undefined;
  onApply: (next: URLSearchParams) => void;
}) {
  const filters = filtersOf(params);
  const form = useContractForm({
    request: ListWebhookDeliveriesRequestSchema,
    fields: { endpointId: choice(), event: choice(), state: choice(), since: localTime() },
    defaults: { endpointId: filters.endpoint, event: filters.event, state: filters.state, since: localInputOf(filters.since) },
  });
  const known = (endpoints ?? []).map((e) => ({ value: e.id, label: e.url }));
  // The URL's endpoint shows as chosen, by its id, until the list names it (or when it is no longer listed).
  const unknown = filters.endpoint && !known.some((e) => e.value === filters.endpoint) ? [{ value: filters.endpoint, label: filters.endpoint }] : [];
  return (
    <Filters
      form={form}
      label="Filter the deliveries"
      filtered={[filters.endpoint, filters.event, filters.state, params.get("since") ?? ""].some(Boolean)}
      onClear={() => onApply(filterParams({ message: filters.message }))}
      onApply={({ endpointId, event, state, since }) => onApply(filterParams({ endpoint: endpointId, event, state, since, message: filters.message }, ["since"]))}
    >
      <SelectField name="endpointId" label="Endpoint" options={[{ value: "", label: "Any endpoint" }, ...known, ...unknown]} />
      <SelectField name="event" label="Event" options={[{ value: "", label: "Any event" }, ...WEBHOOK_EVENTS.map((name) => ({ value: name, label: name }))]} />
      <SelectField name="state" label="State" options={[{ value: "", label: "Any state" }, ...STATES.map((s) => ({ value: s.name, label: stateLabel(s.name) }))]} />
      <TextField name="since" label="Since (your local time)" type="datetime-local" />
    </Filters>
  );
}
