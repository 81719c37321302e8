import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ListMessagesRequestSchema, MailService, type Message } from "@gen/mail/v1/mail_pb.js";
import { Link, useSearchParams } from "react-router";
import { enumValue } from "../../app/enums.ts";
import { Address, DateTime, dateParam, formatNumber } from "../../app/format.tsx";
import { choice, localTime, text } from "../../components/form/contract-rules.ts";
import { Filters, filterParams, localInputOf } from "../../components/form/Filters.tsx";
import { SelectField, TextField, useContractForm } from "../../components/form/Form.tsx";
import { type Column, ListView } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { STATUSES, StatusBadge } from "./statuses.tsx";

/** The filters of the log, read from the URL. */
function filtersOf(params: URLSearchParams) {
  return {
    status: params.get("status") ?? "",
    q: params.get("q") ?? "",
    tag: params.get("tag") ?? "",
    since: dateParam(params.get("since")),
  };
}

const COLUMNS: readonly Column<Message>[] = [
  {
    header: "Recipient",
    role: "title",
    cell: (message) => (
      <Link to={message.id}>
        <Address value={message.recipient} />
      </Link>
    ),
  },
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
    <section className="page" aria-labelledby="messages-title">
      <h1 id="messages-title">Messages</h1>
      {/* Keyed by the URL, so back and forward show the filters of the view they return to. */}
      <MessageFilters key={params.toString()} params={params} onApply={setParams} />
      <ListView
        list={list}
        label="Message log"
        columns={COLUMNS}
        rowKey={(message) => message.id}
        loading="Loading messages…"
        empty={filtered ? "No message matches these filters." : "No message yet."}
        more="Load more messages"
        end="End of the log."
        summary={(count, more) => (more ? `Showing the newest ${formatNumber(count)} messages.` : `${formatNumber(count)} ${count === 1 ? "message" : "messages"}.`)}
      />
    </section>
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
