import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Link, useSearchParams } from "react-router";
import { ListSuppressionsRequestSchema, type Suppression, SuppressionsService } from "@gen/mail/v1/suppressions_pb.js";
import { useSession } from "../../app/auth/session.tsx";
import { enumValue } from "../../app/enums.ts";
import { Address, dateParam, DateTime, formatNumber } from "../../app/format.tsx";
import { choice, localTime, text } from "../../components/form/contract-rules.ts";
import { Filters, filterParams, filtersIn, localInputOf } from "../../components/form/Filters.tsx";
import { SelectField, TextField, useContractForm } from "../../components/form/Form.tsx";
import { type Column, ListView } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";
import { AddSuppression } from "./AddSuppression.tsx";
import { ReasonBadge, REASON_HINTS, REASONS } from "./reasons.tsx";
import { RemoveSuppression } from "./RemoveSuppression.tsx";

/** A row of the list: the entry, keyed by its address. */
type Row = Suppression & { readonly id: string };

function filtersOf(params: URLSearchParams) {
  return { ...filtersIn(params, ["q", "reason"]), until: dateParam(params.get("until")) };
}

function columns(isAdmin: boolean): readonly Column<Row>[] {
  return [
    { header: "Address", role: "title", cell: (row) => <Address value={row.email} /> },
    {
      header: "Reason",
      cell: (row) => (
        <>
          <ReasonBadge reason={row.reason} /> <span className="hint">{REASON_HINTS[row.reason]}</span>
        </>
      ),
    },
    {
      header: "Message",
      cell: (row) =>
        row.messageId ? (
          <Link to={`/messages/${row.messageId}`} className="mono break">
            {row.messageId}
          </Link>
        ) : (
          <span className="muted">—</span>
        ),
    },
    { header: "Suppressed", cell: (row) => <DateTime value={row.createdAt} /> },
    ...(isAdmin ? [{ header: "Actions", role: "actions" as const, cell: (row: Row) => <RemoveSuppression suppression={row} /> }] : []),
  ];
}

function summary(count: number, more: boolean): string {
  return more ? `Showing the newest ${formatNumber(count)} addresses.` : `${formatNumber(count)} ${count === 1 ? "address" : "addresses"}.`;
}

/**
 * The suppression list (every member reads it; Mail administrators add and
 * remove): /admin/suppressions?q=&reason=&since=&until=, newest first.
 */
export default function SuppressionsPage() {
  const { isAdmin } = useSession();
  const [params, setParams] = useSearchParams();
  const filters = filtersOf(params);
  const list = usePagedList(SuppressionsService.method.listSuppressions, {
    q: filters.q || undefined,
    reason: enumValue(REASONS, filters.reason),
    since: filters.since ? timestampFromDate(filters.since) : undefined,
    until: filters.until ? timestampFromDate(filters.until) : undefined,
  });
  const rows = { ...list, items: list.items.map((item): Row => ({ ...item, id: item.email })) };
  const filtered = params.size > 0;
  return (
    <Page title="Suppressions" actions={isAdmin ? <AddSuppression /> : undefined}>
      <p className="hint">
        Messages to these addresses end as suppressed, without using a credit. A permanent bounce or a spam complaint adds an address; removing one lets
        mail go out to it again until its next bounce or complaint.
      </p>
      <SuppressionFilters key={params.toString()} params={params} onApply={setParams} />
      <ListView
        list={rows}
        label="Suppression list"
        noun="addresses"
        columns={columns(isAdmin)}
        empty={filtered ? "No suppressed address matches these filters." : "No address is suppressed."}
        summary={summary}
      />
    </Page>
  );
}

function SuppressionFilters({ params, onApply }: { params: URLSearchParams; onApply: (next: URLSearchParams) => void }) {
  const filters = filtersOf(params);
  const form = useContractForm({
    request: ListSuppressionsRequestSchema,
    fields: { q: text(), reason: choice(), since: localTime(), until: localTime() },
    defaults: { q: filters.q, reason: filters.reason, since: localInputOf(filters.since), until: localInputOf(filters.until) },
  });
  return (
    <Filters
      form={form}
      label="Filter suppressions"
      filtered={params.size > 0}
      onClear={() => onApply(new URLSearchParams())}
      onApply={(values) => onApply(filterParams(values, ["since", "until"]))}
    >
      <TextField name="q" label="Address contains" type="search" autoComplete="off" />
      <SelectField name="reason" label="Reason" options={[{ value: "", label: "Any" }, ...REASONS.map((r) => ({ value: r.name, label: r.name }))]} />
      <TextField name="since" label="Since" type="datetime-local" />
      <TextField name="until" label="Until" type="datetime-local" />
    </Filters>
  );
}
