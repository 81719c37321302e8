import { Link, useSearchParams } from "react-router";
import { type CreditLedgerEntry, CreditLedgerReason, CreditLedgerReasonSchema, CreditsService, ListCreditLedgerRequestSchema } from "@gen/mail/v1/credits_pb.js";
import { enumEntries, enumName, enumValue } from "../../app/enums.ts";
import { DateTime, formatNumber } from "../../app/format.tsx";
import { choice } from "../../components/form/contract-rules.ts";
import { Filters, filterParams, filtersIn } from "../../components/form/Filters.tsx";
import { SelectField, useContractForm } from "../../components/form/Form.tsx";
import { type Column, ListView } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";
import { useCredits } from "./balance.tsx";

/** The ledger's reasons (`charge`, `refund`, `grant`, `adjustment`), by the name the REST answers and the URL use. */
const REASONS = enumEntries<CreditLedgerReason>(CreditLedgerReasonSchema);

/** What each reason is, in the screen's words. */
const REASON_HINTS: Record<CreditLedgerReason, string> = {
  [CreditLedgerReason.UNSPECIFIED]: "",
  [CreditLedgerReason.CHARGE]: "a message handed to the email service",
  [CreditLedgerReason.REFUND]: "a message the email service rejected",
  [CreditLedgerReason.GRANT]: "added by your Mail provider",
  [CreditLedgerReason.ADJUSTMENT]: "taken by your Mail provider",
};

function change(delta: bigint): string {
  return delta > 0n ? `+${formatNumber(delta)}` : `−${formatNumber(-delta)}`;
}

const COLUMNS: readonly Column<CreditLedgerEntry>[] = [
  { header: "Change", role: "title", cell: (entry) => <span className={entry.delta > 0n ? "ok" : undefined}>{change(entry.delta)}</span> },
  {
    header: "Reason",
    cell: (entry) => (
      <>
        <span className="badge">{enumName(REASONS, entry.reason)}</span> <span className="hint">{REASON_HINTS[entry.reason]}</span>
      </>
    ),
  },
  {
    header: "Message or note",
    wide: true,
    cell: (entry) =>
      entry.messageId ? (
        <Link to={`/messages/${entry.messageId}`} className="mono break">
          {entry.messageId}
        </Link>
      ) : entry.note ? (
        entry.note
      ) : (
        <span className="muted">—</span>
      ),
  },
  { header: "When", cell: (entry) => <DateTime value={entry.createdAt} /> },
];

/** The Credits tab (every member): the balance and the ledger, /admin/credits?reason=. */
export default function CreditsPage() {
  const [params, setParams] = useSearchParams();
  const { reason } = filtersIn(params, ["reason"]);
  const list = usePagedList(CreditsService.method.listCreditLedger, { reason: enumValue(REASONS, reason) });
  return (
    <Page title="Credits">
      <Balance />
      <h2>Ledger</h2>
      <LedgerFilters key={params.toString()} params={params} onApply={setParams} />
      <ListView
        list={list}
        label="Credit ledger"
        noun="entries"
        columns={COLUMNS}
        empty={params.size > 0 ? "No entry matches this filter." : "No entry yet: no credit was added or used."}
      />
    </Page>
  );
}

function Balance() {
  const { data, error } = useCredits();
  if (error) return <p className="error">The balance could not be read.</p>;
  if (!data) return <p role="status">Loading the balance…</p>;
  return (
    <div className="panel">
      <dl className="fields">
        <div>
          <dt>Balance</dt>
          <dd className={data.low ? "error" : undefined}>
            {formatNumber(data.balance)} {data.balance === 1n ? "credit" : "credits"}
          </dd>
        </div>
        <div>
          <dt>Low-balance mark</dt>
          <dd>{data.lowBalanceThreshold > 0n ? `below ${formatNumber(data.lowBalanceThreshold)}` : "none"}</dd>
        </div>
        <div>
          <dt>How credits work</dt>
          <dd>Each message uses one credit when it is handed to the email service; a rejected message gets it back.</dd>
        </div>
      </dl>
    </div>
  );
}

function LedgerFilters({ params, onApply }: { params: URLSearchParams; onApply: (next: URLSearchParams) => void }) {
  const { reason } = filtersIn(params, ["reason"]);
  const form = useContractForm({ request: ListCreditLedgerRequestSchema, fields: { reason: choice() }, defaults: { reason } });
  return (
    <Filters form={form} label="Filter the ledger" filtered={params.size > 0} onClear={() => onApply(new URLSearchParams())} onApply={(values) => onApply(filterParams(values))}>
      <SelectField name="reason" label="Reason" options={[{ value: "", label: "Any" }, ...REASONS.map((r) => ({ value: r.name, label: r.name }))]} />
    </Filters>
  );
}
