import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useSearchParams } from "react-router";
import { AuditActorKind, type AuditEvent, AuditService, ListAuditEventsRequestSchema } from "@gen/mail/v1/audit_pb.js";
import { Address, DateTime } from "../../app/format.tsx";
import { localTime, text } from "../../components/form/contract-rules.ts";
import { Filters, filterParams, filtersIn, localInputOf } from "../../components/form/Filters.tsx";
import { TextField, useContractForm } from "../../components/form/Form.tsx";
import { type Column, ListView } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";

const ACTOR_KIND: Record<AuditActorKind, string> = {
  [AuditActorKind.UNSPECIFIED]: "",
  [AuditActorKind.MEMBER]: "member",
  [AuditActorKind.API_KEY]: "API key",
  [AuditActorKind.OPERATOR]: "operator",
  [AuditActorKind.SYSTEM]: "the service",
};

const COLUMNS: readonly Column<AuditEvent>[] = [
  { header: "Action", role: "title", cell: (e) => <span className="mono">{e.action}</span> },
  {
    header: "Actor",
    cell: (e) => (
      <>
        <Address value={e.actor} /> <span className="hint">{ACTOR_KIND[e.actorKind]}</span>
      </>
    ),
  },
  { header: "When", cell: (e) => <DateTime value={e.occurredAt} /> },
  {
    header: "Target",
    cell: (e) => (
      <>
        <span className="hint">{e.targetType}</span> <span className="mono break">{e.targetId}</span>
      </>
    ),
  },
  { header: "Details", wide: true, cell: (e) => <span className="mono break">{e.details}</span> },
  {
    header: "Request",
    cell: (e) => (
      <>
        <span className="mono break">{e.requestId}</span>
        {e.clientIp ? <span className="hint"> from {e.clientIp}</span> : null}
      </>
    ),
  },
];

function filtersOf(params: URLSearchParams) {
  return filtersIn(params, ["actor", "action"]);
}

/** The audit log (Mail administrators): /admin/audit?actor=&action=&since=, newest first, cursor paging. */
export default function AuditPage() {
  const [params, setParams] = useSearchParams();
  const { actor, action, since } = filtersOf(params);
  const list = usePagedList(AuditService.method.listAuditEvents, {
    ...(actor ? { actor } : {}),
    ...(action ? { action } : {}),
    ...(since ? { since: timestampFromDate(since) } : {}),
  });
  return (
    <Page title="Audit log">
      <AuditFilters key={params.toString()} params={params} onApply={setParams} />
      <ListView list={list} label="Table of audit events" noun="events" columns={COLUMNS} empty="No event matches." />
    </Page>
  );
}

function AuditFilters({ params, onApply }: { params: URLSearchParams; onApply: (next: URLSearchParams) => void }) {
  const { actor, action, since } = filtersOf(params);
  const form = useContractForm({
    request: ListAuditEventsRequestSchema,
    fields: { actor: text(), action: text(), since: localTime() },
    defaults: { actor, action, since: localInputOf(since) },
  });
  return (
    <Filters form={form} label="Filter the audit log" filtered={params.size > 0} onClear={() => onApply(new URLSearchParams())} onApply={(values) => onApply(filterParams(values, ["since"]))}>
      <TextField name="actor" label="Actor" placeholder="email, key prefix or operator" />
      <TextField name="action" label="Action" placeholder="api_key.revoked" />
      <TextField name="since" label="Since (your local time)" type="datetime-local" />
    </Filters>
  );
}
