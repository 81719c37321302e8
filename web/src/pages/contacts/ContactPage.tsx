import { useQuery } from "@connectrpc/connect-query";
import type { JsonValue } from "@bufbuild/protobuf";
import { type Contact, type Conversion, ConversionEventTypeSchema, ConversionStatus, ConversionStatusSchema, type Form, MailService, type Message } from "@gen/mail/v1/mail_pb.js";
import { ReportsService } from "@gen/mail/v1/reports_pb.js";
import { Link, useParams } from "react-router";
import { enumEntries, enumName } from "../../app/enums.ts";
import { errorMessage, isNotFound } from "../../app/errors.ts";
import { Address, DateTime, formatNumber } from "../../app/format.tsx";
import { type FieldEntry, Fields } from "../../components/Fields.tsx";
import { type Column, ListView, titleLink } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";
import { StatusBadge } from "../messages/statuses.tsx";
import { fullName, TagList } from "./ContactList.tsx";
import { useListNames } from "./lists.ts";
import { ContactStatusBadge, STATUS_MEANING } from "./statuses.tsx";

const NONE = <span className="muted">—</span>;

/**
 * One contact: its fields and status, the consent evidence (and what a
 * sign-up form recorded with it), its lists, the messages sent to its
 * address and its conversions.
 */
export function ContactPage() {
  const { id = "" } = useParams();
  const query = useQuery(MailService.method.getContact, { id }, { retry: false });
  if (query.isPending) return <p role="status">Loading the contact…</p>;
  if (query.isError || !query.data.contact) {
    const missing = !query.isError || isNotFound(query.error);
    return (
      <Page before={<Breadcrumb />} title={missing ? "Contact not found" : "The contact could not be read"}>
        <p role="alert">{missing ? "There is no contact with this id in your company." : errorMessage(query.error)}</p>
      </Page>
    );
  }
  const contact = query.data.contact;
  return (
    <Page before={<Breadcrumb />} title={<Address value={contact.email} />} titleClass="title-url">
      <ContactFields contact={contact} />
      <ConsentEvidence contact={contact} />
      <ContactLists contact={contact} />
      <MessagesTo contact={contact} />
      <ConversionsOf contact={contact} />
    </Page>
  );
}

function Breadcrumb() {
  return (
    <nav aria-label="Breadcrumb" className="breadcrumb">
      <Link to="/contacts">Contacts</Link> / <span aria-current="page">Contact</span>
    </nav>
  );
}

/** An attribute's value as text: the JSON scalars a contact's attributes hold. */
function attributeText(value: JsonValue): string {
  if (value === null) return "null";
  if (typeof value === "boolean") return value ? "yes" : "no";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function ContactFields({ contact }: { contact: Contact }) {
  const attributes = Object.entries(contact.attributes ?? {});
  const items: FieldEntry[] = [
    {
      label: "Status",
      value: (
        <>
          <ContactStatusBadge status={contact.status} /> <span className="hint">{STATUS_MEANING[contact.status]}</span>
        </>
      ),
    },
    { label: "Name", value: fullName(contact) || NONE },
    { label: "Company", value: contact.company ?? NONE },
    { label: "Phone", value: contact.phone ?? NONE, mono: true },
    { label: "Locale", value: contact.locale ?? NONE, mono: true },
    { label: "Tags", value: <TagList tags={contact.tags} /> },
    { label: "Created", value: <DateTime value={contact.createdAt} /> },
    { label: "Updated", value: <DateTime value={contact.updatedAt} /> },
    { label: "Id", value: contact.id, mono: true },
  ];
  return (
    <>
      <Fields items={items} />
      <section aria-labelledby="attributes-title">
        <h2 id="attributes-title">Attributes</h2>
        {attributes.length === 0 ? (
          <p className="muted">No attribute.</p>
        ) : (
          <Fields items={attributes.map(([key, value]) => ({ label: key, value: attributeText(value), mono: typeof value !== "string" }))} />
        )}
      </section>
    </>
  );
}

/** The form a consent source names (`form:<publicId>`), if it is one. */
function formOf(source: string): string | undefined {
  return source.startsWith("form:") ? source.slice("form:".length) : undefined;
}

/**
 * What a sign-up form wrote into the consent reference: `consent text v<N>;
 * ip <address>` at the sign-up, with `; double opt-in confirmed` when the
 * address's owner confirmed (docs/forms.md, "What a sign-up writes").
 */
function formRecord(reference: string | undefined): { version?: string; ip?: string; confirmed: boolean } {
  const text = reference ?? "";
  return {
    version: /consent text v(\d+)/.exec(text)?.[1],
    ip: /(?:^|; )ip ([^;]+)/.exec(text)?.[1]?.trim(),
    confirmed: /double opt-in confirmed/.test(text),
  };
}

function ConsentEvidence({ contact }: { contact: Contact }) {
  const consent = contact.consent;
  const publicId = consent ? formOf(consent.source) : undefined;
  const forms = useQuery(MailService.method.listForms, {}, { enabled: publicId !== undefined });
  return (
    <>
      <section aria-labelledby="consent-title" className="panel">
        <h2 id="consent-title">Consent</h2>
        {!consent ? (
          <p>No consent recorded: the contact receives no marketing email until a write brings consent.</p>
        ) : (
          <Fields
            items={[
              { label: "Source", value: consent.source, mono: true },
              { label: "Given", value: <DateTime value={consent.at} /> },
              { label: "Reference", value: consent.reference ?? NONE, mono: consent.reference !== undefined },
            ]}
          />
        )}
      </section>
      {consent && publicId !== undefined ? (
        <FormRecord publicId={publicId} reference={consent.reference} form={forms.data?.items.find((f) => f.publicId === publicId)} />
      ) : null}
    </>
  );
}

function FormRecord({ publicId, reference, form }: { publicId: string; reference: string | undefined; form: Form | undefined }) {
  const record = formRecord(reference);
  return (
    <section aria-labelledby="form-record-title" className="panel">
      <h2 id="form-record-title">What the form recorded</h2>
      <Fields
        items={[
          {
            label: "Form",
            value: form ? <Link to={`/forms/${encodeURIComponent(publicId)}`}>{form.name}</Link> : <span className="mono">{publicId} (no longer active)</span>,
          },
          { label: "Consent text version", value: record.version ?? NONE },
          { label: "Visitor's IP address", value: record.ip ?? NONE, mono: record.ip !== undefined },
          { label: "Double opt-in", value: record.confirmed ? "confirmed by the address's owner" : form?.doubleOptIn ? "not confirmed yet" : "not asked" },
          ...(form ? [{ label: "Consent text (as the form shows it now)", value: form.consentText }] : []),
        ]}
      />
      <p className="hint">The other fields the visitor filled in are the contact&apos;s attributes (above).</p>
    </section>
  );
}

function ContactLists({ contact }: { contact: Contact }) {
  const names = useListNames();
  return (
    <section aria-labelledby="lists-title">
      <h2 id="lists-title">Lists</h2>
      {contact.listIds.length === 0 ? (
        <p className="muted">In no list.</p>
      ) : (
        <>
          <ul>
            {contact.listIds.map((id) => (
              <li key={id}>
                <Link to={`/contacts?listId=${encodeURIComponent(id)}`} className={names?.has(id) ? undefined : "mono break"}>
                  {names?.get(id) ?? id}
                </Link>
              </li>
            ))}
          </ul>
          {names ? null : <p className="hint">List names are shown to Mail administrators; each link shows the list&apos;s contacts.</p>}
        </>
      )}
    </section>
  );
}

const MESSAGE_COLUMNS: readonly Column<Message>[] = [
  titleLink("Subject", (message) => message.subject || "(no subject)", { to: (message) => `/messages/${message.id}` }),
  { header: "Status", cell: (message) => <StatusBadge status={message.status} /> },
  { header: "Created", cell: (message) => <DateTime value={message.createdAt} /> },
];

/** The message log filtered to the contact's address (every message to it, whatever its spelling). */
function MessagesTo({ contact }: { contact: Contact }) {
  const list = usePagedList(MailService.method.listMessages, { recipient: contact.email });
  return (
    <section aria-labelledby="messages-title">
      <h2 id="messages-title">Messages sent to this address</h2>
      <ListView list={list} label="Messages to this contact" noun="messages" columns={MESSAGE_COLUMNS} empty="No message was sent to this address." />
    </section>
  );
}

const EVENT_TYPES = enumEntries(ConversionEventTypeSchema);
const CONVERSION_STATUSES = enumEntries<ConversionStatus>(ConversionStatusSchema);

/** An exact decimal amount (`"49.95"`) in its currency, in the member's locale. */
function money(amount: string, currency: string): string {
  return formatNumber(Number(amount), { style: "currency", currency });
}

const CONVERSION_COLUMNS: readonly Column<Conversion>[] = [
  { header: "Event id", role: "title", cell: (c) => <span className="mono break">{c.eventId}</span> },
  { header: "Net revenue", cell: (c) => money(c.netRevenue, c.currency) },
  {
    header: "Status",
    cell: (c) => <span className={c.status === ConversionStatus.COMPLETED ? "badge badge-ok" : "badge"}>{enumName(CONVERSION_STATUSES, c.status)}</span>,
  },
  { header: "Type", cell: (c) => enumName(EVENT_TYPES, c.eventType) },
  { header: "Revenue", cell: (c) => money(c.revenue, c.currency) },
  { header: "Occurred", cell: (c) => <DateTime value={c.occurredAt} /> },
  { header: "Campaign", cell: (c) => (c.campaignId ? <span className="mono break">{c.campaignId}</span> : NONE) },
];

function ConversionsOf({ contact }: { contact: Contact }) {
  const list = usePagedList(ReportsService.method.listContactConversions, { contactId: contact.id });
  return (
    <section aria-labelledby="conversions-title">
      <h2 id="conversions-title">Conversions</h2>
      <ListView list={list} label="Conversions of this contact" noun="conversions" columns={CONVERSION_COLUMNS} empty="No conversion recorded for this contact." />
    </section>
  );
}
