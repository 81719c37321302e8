import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import {
  CreateDomainRequestSchema,
  CreateSenderRequestSchema,
  type DnsRecord,
  DnsRecordPurpose,
  DnsRecordState,
  DnsRecordType,
  type Domain,
  DomainsService,
  DomainStatus,
  type Sender,
  SendersService,
} from "@gen/mail/v1/domains_pb.js";
import { useSession } from "../../app/auth/session.tsx";
import { problemText } from "../../app/errors.ts";
import { Address, DateTime } from "../../app/format.tsx";
import { ConfirmAction } from "../../components/admin/ConfirmAction.tsx";
import { CopyStatus, useCopy } from "../../components/admin/CopyButton.tsx";
import { FormDialog } from "../../components/admin/FormDialog.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";
import { text, yesNo } from "../../components/form/contract-rules.ts";
import { CheckboxField, Form, FormAlert, Submit, TextField, useContractForm } from "../../components/form/Form.tsx";
import { type Column, ListView } from "../../components/list/ListView.tsx";
import { usePagedList } from "../../components/list/paged-list.ts";
import { Page } from "../../components/Page.tsx";
import { STATUS } from "./status.ts";

const PURPOSE: Record<DnsRecordPurpose, string> = {
  [DnsRecordPurpose.UNSPECIFIED]: "",
  [DnsRecordPurpose.DKIM]: "DKIM",
  [DnsRecordPurpose.SPF]: "SPF (MAIL FROM)",
  [DnsRecordPurpose.RETURN_PATH]: "MX (MAIL FROM)",
  [DnsRecordPurpose.DMARC]: "DMARC",
};

const STATE: Record<DnsRecordState, { label: string; className: string }> = {
  [DnsRecordState.UNSPECIFIED]: { label: "not checked", className: "badge" },
  [DnsRecordState.UNCHECKED]: { label: "not checked", className: "badge" },
  [DnsRecordState.VERIFIED]: { label: "found", className: "badge badge-ok" },
  [DnsRecordState.MISSING]: { label: "missing", className: "badge badge-bad" },
  [DnsRecordState.WRONG]: { label: "wrong", className: "badge badge-bad" },
};

/**
 * The Domains tab: /admin/domains. Each sending domain with the DNS records
 * to publish (a copy button per name and value), their state at the last
 * check, the domain's status and "Check now"; the senders below. Every
 * member reads; Mail administrators add, check and remove.
 */
export default function DomainsPage() {
  const { isAdmin } = useSession();
  const domains = useQuery(DomainsService.method.listDomains, {});
  return (
    <Page title="Domains" actions={isAdmin ? <AddDomain /> : undefined}>
      <p className="hint">
        A sender may send once its domain is verified: publish each record at your DNS host, exactly as shown. A domain verified once goes on sending if a
        record disappears later; it shows as degraded and your owners are emailed.
      </p>
      {domains.isPending ? <p role="status">Loading…</p> : null}
      {domains.isError ? (
        <div className="warning" role="alert">
          <p>The domains could not be read: {problemText(domains.error)}</p>
          <button type="button" className="button" onClick={() => void domains.refetch()}>
            Try again
          </button>
        </div>
      ) : null}
      {domains.data && domains.data.items.length === 0 ? <p>No domain yet.</p> : null}
      {domains.data?.items.map((domain) => <DomainSection key={domain.id} domain={domain} isAdmin={isAdmin} />)}
      <Senders isAdmin={isAdmin} />
    </Page>
  );
}

function DomainSection({ domain, isAdmin }: { domain: Domain; isAdmin: boolean }) {
  const status = STATUS[domain.status];
  const headingId = `domain-${domain.id}`;
  return (
    <section className="domain" aria-labelledby={headingId}>
      <div className="domain-head">
        <h2 id={headingId} className="break">
          {domain.domain}
        </h2>
        <span className={status.className}>{status.label}</span>
      </div>
      <p className="hint">
        {domain.verificationOverridden
          ? "An operator marked it verified without DNS (development only): its senders send whatever the records below say."
          : status.hint}
      </p>
      <p>
        Last checked: <DateTime value={domain.lastCheckedAt} empty="never" />
      </p>
      {isAdmin ? (
        <div className="row-actions">
          <CheckNow domain={domain} />
          <DeleteDomain domain={domain} />
        </div>
      ) : null}
      <ul className="records" aria-label={`DNS records of ${domain.domain}`}>
        {domain.records.map((record) => (
          <RecordItem key={`${record.purpose}`} record={record} />
        ))}
      </ul>
    </section>
  );
}

function RecordItem({ record }: { record: DnsRecord }) {
  const purpose = PURPOSE[record.purpose];
  const state = STATE[record.state];
  const type = record.type === DnsRecordType.MX ? "MX" : "TXT";
  return (
    <li className="record">
      <p>
        <strong>{purpose}</strong> <span className="mono">{type}</span> <span className={state.className}>{state.label}</span>
      </p>
      <CopyValue label={`Name of the ${purpose} record`} value={record.name} />
      <CopyValue label={`Value of the ${purpose} record`} value={record.value} />
      {record.state === DnsRecordState.WRONG && record.found.length > 0 ? (
        <p className="hint">
          DNS answers: <span className="mono break">{record.found.join(" | ")}</span>
        </p>
      ) : null}
    </li>
  );
}

/** One value to publish, as text that wraps, with its Copy button; the copy is announced ("Copied to the clipboard."). */
function CopyValue({ label, value }: { label: string; value: string }) {
  const copy = useCopy();
  return (
    <div className="copy-value">
      <span className="copy-label">{label.startsWith("Name") ? "Name" : "Value"}</span>
      <code className="mono break">{value}</code>
      <button type="button" className="button" aria-label={`Copy: ${label.toLowerCase()}`} onClick={() => copy.copy(value)}>
        Copy
      </button>
      <CopyStatus state={copy.state} what="the value" />
    </div>
  );
}

function CheckNow({ domain }: { domain: Domain }) {
  const refresh = useRefresh(DomainsService);
  const check = useMutation(DomainsService.method.checkDomain, { onSuccess: refresh });
  return (
    <>
      <button type="button" className="button" aria-label={`Check now: ${domain.domain}`} disabled={check.isPending} onClick={() => check.mutate({ id: domain.id })}>
        {check.isPending ? "Checking…" : "Check now"}
      </button>
      <span role="status" className="hint">
        {check.isSuccess ? `Checked: ${STATUS[check.data.domain?.status ?? DomainStatus.UNSPECIFIED].label}.` : check.isError ? `Could not check: ${problemText(check.error)}` : ""}
      </span>
    </>
  );
}

function DeleteDomain({ domain }: { domain: Domain }) {
  const refresh = useRefresh(DomainsService);
  const remove = useMutation(DomainsService.method.deleteDomain);
  return (
    <ConfirmAction
      label="Delete"
      ariaLabel={`Delete ${domain.domain}`}
      title={`Delete the domain ${domain.domain}?`}
      description={<p>A domain that still has senders is not deleted: remove its senders first. This cannot be undone.</p>}
      confirmLabel="Delete domain"
      destructive
      onConfirm={async () => {
        await remove.mutateAsync({ id: domain.id });
        await refresh();
      }}
    />
  );
}

function AddDomain() {
  const [open, setOpen] = useState(false);
  const refresh = useRefresh(DomainsService);
  const add = useMutation(DomainsService.method.createDomain, { onSuccess: refresh });
  const form = useContractForm({ request: CreateDomainRequestSchema, fields: { domain: text() }, defaults: { domain: "" } });
  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) form.reset();
  };
  return (
    <FormDialog label="Add domain" title="Add a sending domain" description="You then publish its DNS records at your DNS host." open={open} onOpenChange={openOrClose}>
      <Form
        form={form}
        className="form"
        onSubmit={async ({ domain }) => {
          await add.mutateAsync({ domain });
          openOrClose(false);
        }}
      >
        <TextField name="domain" label="Domain" hint="For example example.com" autoComplete="off" />
        <FormAlert />
        <div className="actions">
          <Submit pending="Adding…">Add domain</Submit>
        </div>
      </Form>
    </FormDialog>
  );
}

function senderColumns(isAdmin: boolean): readonly Column<Sender>[] {
  return [
    { header: "Address", role: "title", cell: (sender) => <Address value={sender.email} /> },
    { header: "Name", cell: (sender) => sender.name ?? <span className="muted">—</span> },
    {
      header: "Default",
      cell: (sender) => (sender.isDefault ? <span className="badge badge-ok">default</span> : <span className="muted">—</span>),
    },
    { header: "May send", cell: (sender) => (sender.verified ? "yes" : "not until its domain is verified") },
    ...(isAdmin
      ? [
          {
            header: "Actions",
            role: "actions" as const,
            cell: (sender: Sender) => (
              <div className="row-actions">
                {sender.isDefault ? null : <MakeDefault sender={sender} />}
                <RemoveSender sender={sender} />
              </div>
            ),
          },
        ]
      : []),
  ];
}

function Senders({ isAdmin }: { isAdmin: boolean }) {
  const list = usePagedList(SendersService.method.listSenders, {});
  return (
    <section aria-labelledby="senders-heading">
      <div className="domain-head">
        <h2 id="senders-heading">Senders</h2>
        {isAdmin ? <AddSender /> : null}
      </div>
      <p className="hint">A send without a sender goes out from the default sender.</p>
      <ListView list={list} label="Table of senders" noun="senders" columns={senderColumns(isAdmin)} empty="No sender yet." />
    </section>
  );
}

function MakeDefault({ sender }: { sender: Sender }) {
  const refresh = useRefresh(SendersService);
  const make = useMutation(SendersService.method.setDefaultSender, { onSuccess: refresh });
  return (
    <button type="button" className="button" aria-label={`Make default: ${sender.email}`} disabled={make.isPending} onClick={() => make.mutate({ id: sender.id })}>
      Make default
    </button>
  );
}

function RemoveSender({ sender }: { sender: Sender }) {
  const refresh = useRefresh(SendersService);
  const remove = useMutation(SendersService.method.deleteSender);
  return (
    <ConfirmAction
      label="Remove"
      ariaLabel={`Remove ${sender.email}`}
      title={`Remove the sender ${sender.email}?`}
      description={<p>The default sender can only be removed when it is the last one.</p>}
      confirmLabel="Remove sender"
      destructive
      onConfirm={async () => {
        await remove.mutateAsync({ id: sender.id });
        await refresh();
      }}
    />
  );
}

function AddSender() {
  const [open, setOpen] = useState(false);
  const refresh = useRefresh(SendersService);
  const add = useMutation(SendersService.method.createSender, { onSuccess: refresh });
  const form = useContractForm({
    request: CreateSenderRequestSchema,
    fields: { email: text(), name: text(), makeDefault: yesNo() },
    defaults: { email: "", name: "", makeDefault: false },
  });
  const openOrClose = (next: boolean) => {
    setOpen(next);
    if (!next) form.reset();
  };
  return (
    <FormDialog label="Add sender" title="Add a sender" description="An address on one of your domains." open={open} onOpenChange={openOrClose}>
      <Form
        form={form}
        className="form"
        onSubmit={async ({ email, name, makeDefault }) => {
          await add.mutateAsync({ email, name: name || undefined, makeDefault });
          openOrClose(false);
        }}
      >
        <TextField name="email" label="Email address" type="email" autoComplete="off" />
        <TextField name="name" label="Display name" autoComplete="off" />
        <CheckboxField name="makeDefault" label="Make it the default sender" />
        <FormAlert />
        <div className="actions">
          <Submit pending="Adding…">Add sender</Submit>
        </div>
      </Form>
    </FormDialog>
  );
}
