import { type Contact, ListContactsRequestSchema, MailService } from "@gen/mail/v1/mail_pb.js";
import { useSearchParams } from "react-router";
import { useSession } from "../../app/auth/session.tsx";
import { enumValue } from "../../app/enums.ts";
import { Address, DateTime, formatNumber } from "../../app/format.tsx";
import { choice, text } from "../../components/form/contract-rules.ts";
import { Filters, filterParams, filtersIn } from "../../components/form/Filters.tsx";
import { SelectField, TextField, useContractForm } from "../../components/form/Form.tsx";
import { type Column, ListView, titleLink } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";
import { useListNames } from "./lists.ts";
import { CONTACT_STATUSES, ContactStatusBadge } from "./statuses.tsx";

/** The filters of the table, read from the URL (the names of GET /mail/v1/contacts's query). */
function filtersOf(params: URLSearchParams) {
  return filtersIn(params, ["status", "q", "tag", "listId"]);
}

function summary(count: number, more: boolean): string {
  return more ? `Showing the newest ${formatNumber(count)} contacts.` : `${formatNumber(count)} ${count === 1 ? "contact" : "contacts"}.`;
}

export function fullName(contact: Pick<Contact, "firstName" | "lastName">): string {
  return [contact.firstName, contact.lastName].filter(Boolean).join(" ");
}

function columns(listNames: ReadonlyMap<string, string> | undefined): readonly Column<Contact>[] {
  return [
    titleLink("Email", (contact) => <Address value={contact.email} />),
    { header: "Status", cell: (contact) => <ContactStatusBadge status={contact.status} /> },
    { header: "Name", cell: (contact) => fullName(contact) || <span className="muted">—</span> },
    {
      header: "Lists",
      cell: (contact) =>
        contact.listIds.length === 0 ? (
          <span className="muted">—</span>
        ) : listNames ? (
          contact.listIds.map((id) => listNames.get(id) ?? id).join(", ")
        ) : (
          formatNumber(contact.listIds.length)
        ),
    },
    { header: "Tags", cell: (contact) => <TagList tags={contact.tags} /> },
    { header: "Created", cell: (contact) => <DateTime value={contact.createdAt} /> },
  ];
}

/** The contacts, newest first, 25 at a time; filters by status, list, tag and search live in the URL. */
export function ContactList() {
  const [params, setParams] = useSearchParams();
  const filters = filtersOf(params);
  const listNames = useListNames();
  const list = usePagedList(MailService.method.listContacts, {
    status: enumValue(CONTACT_STATUSES, filters.status),
    q: filters.q || undefined,
    tag: filters.tag || undefined,
    listId: filters.listId || undefined,
  });
  const filtered = params.size > 0;
  return (
    <Page title="Contacts">
      {/* Keyed by the URL, so back and forward show the filters of the view they return to. */}
      <ContactFilters key={params.toString()} params={params} listNames={listNames} onApply={setParams} />
      <ListView
        list={list}
        label="Table of contacts"
        noun="contacts"
        columns={columns(listNames)}
        empty={filtered ? "No contact matches these filters." : "No contact yet. Contacts come from POST /mail/v1/contacts, sign-up forms and connected stores."}
        summary={summary}
      />
    </Page>
  );
}

function ContactFilters({
  params,
  listNames,
  onApply,
}: {
  params: URLSearchParams;
  listNames: ReadonlyMap<string, string> | undefined;
  onApply: (next: URLSearchParams) => void;
}) {
  const filters = filtersOf(params);
  const { isAdmin } = useSession();
  const form = useContractForm({
    request: ListContactsRequestSchema,
    fields: { q: text(), status: choice(), tag: text(), listId: text() },
    defaults: { q: filters.q, status: filters.status, tag: filters.tag, listId: filters.listId },
  });
  return (
    <Filters form={form} label="Filter contacts" filtered={params.size > 0} onClear={() => onApply(new URLSearchParams())} onApply={(values) => onApply(filterParams(values))}>
      <TextField name="q" label="Email or name" type="search" autoComplete="off" />
      <SelectField name="status" label="Status" options={[{ value: "", label: "Any" }, ...CONTACT_STATUSES.map((s) => ({ value: s.name, label: s.name }))]} />
      {isAdmin ? (
        <SelectField
          name="listId"
          label="List"
          options={[
            { value: "", label: "Any" },
            ...[...(listNames ?? [])].map(([value, label]) => ({ value, label })),
            // The URL's list shows as chosen, by its id, until the lists name it (or when it is no longer one).
            ...(filters.listId && !listNames?.has(filters.listId) ? [{ value: filters.listId, label: filters.listId }] : []),
          ]}
        />
      ) : (
        // Listing the lists needs Mail administration: a member filters by a list's id.
        <TextField name="listId" label="List id" autoComplete="off" />
      )}
      <TextField name="tag" label="Tag" autoComplete="off" />
    </Filters>
  );
}

/** A contact's tags as badges. */
export function TagList({ tags }: { tags: readonly string[] }) {
  if (tags.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="tags">
      {tags.map((tag) => (
        <li key={tag} className="badge">
          {tag}
        </li>
      ))}
    </ul>
  );
}
