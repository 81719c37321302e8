import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ListMessagesRequestSchema, MailService, type Message } from "@gen/mail/v1/mail_pb.js";
import { useSearchParams } from "react-router";
import { enumValue } from "../../app/enums.ts";
import { Address, DateTime, formatNumber } from "../../app/format.tsx";
import { choice, localTime, text } from "../../components/form/contract-rules.ts";
import { Filters, filterParams, filtersIn, localInputOf } from "../../components/form/Filters.tsx";
import { SelectField, TextField, useContractForm } from "../../components/form/Form.tsx";
import { type Column, ListView, titleLink } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";
import { STATUSES, StatusBadge } from "./statuses.tsx";

/** How many messages the log shows. */
function summary(count: number, more: boolean): string {
  return more ? `Showing the newest ${formatNumber(count)} messages.` : `${formatNumber(count)} ${count === 1 ? "message" : "messages"}.`;
}

/** The filters of the log, read from the URL. */
function filtersOf(params: URLSearchParams) {
  return filtersIn(params, ["status", "q", "tag"]);
}

const COLUMNS: readonly Column<Message>[] = [
  titleLink("Recipient", (message) => <Address value={message.recipient} />),
  { header: "Subject", wide: true, cell: (message) => message.subject },
  { header: "Status", cell: (message) => <StatusBadge status={message.status} /> },
  { header: "Created", cell: (message) => <DateTime value={message.createdAt} /> },
  { header: "Tags", cell: (message) => <Tags tags={message.tags} /> },
];

/**
 * The message log, newest first, one page of 25 after another (more load
 * as the end of the list comes into view, or with the button).
 */
export function MessageLog() {
  const [params, setParams] = useSearchParams();
  const filters = filtersOf(params);
  const list = usePagedList(MailService.method.listMessages, {
    status: enumValue(STATUSES, filters.status),
    q: filters.q || undefined,
    tag: filters.tag || undefined,
    since: filters.since ? timestampFromDate(filters.since) : undefined,
  });
  const filtered = params.size > 0;
  return (
    <Page title="Messages">
      {/* Keyed by the URL, so back and forward show the filters of the view they return to. */}
      <MessageFilters key={params.toString()} params={params} onApply={setParams} />
      <ListView list={list} label="Message log" noun="messages" columns={COLUMNS} empty={filtered ? "No message matches these filters." : "No message yet."} summary={summary} />
    </Page>
  );
}

function MessageFilters({ params, onApply }: { params: URLSearchParams; onApply: (next: URLSearchParams) => void }) {
  const filters = filtersOf(params);
  const form = useContractForm({
    request: ListMessagesRequestSchema,
    fields: { q: text(), status: choice(), tag: text(), since: localTime() },
    defaults: { q: filters.q, status: filters.status, tag: filters.tag, since: localInputOf(filters.since) },
  });
  return (
    <Filters form={form} label="Filter messages" filtered={params.size > 0} onClear={() => onApply(new URLSearchParams())} onApply={(values) => onApply(filterParams(values, ["since"]))}>
      <TextField name="q" label="Recipient or subject" type="search" autoComplete="off" />
      <SelectField name="status" label="Status" options={[{ value: "", label: "Any" }, ...STATUSES.map((s) => ({ value: s.name, label: s.name }))]} />
      <TextField name="tag" label="Tag" autoComplete="off" />
      <TextField name="since" label="Since" type="datetime-local" />
    </Filters>
  );
}

export function Tags({ tags }: { tags: Record<string, string> }) {
  const entries = Object.entries(tags);
  if (entries.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="tags">
      {entries.map(([key, value]) => (
        <li key={key} className="badge">
          {key}: {value}
        </li>
      ))}
    </ul>
  );
}
