#!/usr/bin/env -S node --disable-warning=ExperimentalWarning
/**
 * mailctl: the operators' command line (gRPC/Connect on the operator
 * listener, never the public JSON routes): the AdminService for what is the
 * operator's alone, and the company services (ApiKeys, Members, Webhooks,
 * Lists, SignupForms, Reports, Templates, Mail, Suppressions, Credits, SendingStatus) acting for `--company` with the
 * operator token and the x-mail-company-id header. Every command prints JSON on stdout; errors
 * print `{ "error": { "code", "message" } }` on stderr and exit 1. The
 * developer's commands `listen` (a line per event, until ^C) and `trigger`
 * take an API key as well (./listen.ts).
 *
 *   MAIL_ADMIN_URL   operator listener address (default http://127.0.0.1:8082)
 *   OPERATOR_TOKEN   the operator token configured on the service
 */
import { readFile } from "node:fs/promises";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { type DescMessage, type DescService, fromJson, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ApiError, apiErrorFrom } from "../contract/api-error.ts";
import { enumValueFromJson, messageToPublicJson } from "../contract/json-codec.ts";
import { AdminService } from "../gen/mail/v1/admin_pb.js";
import { type ApiKey, ApiKeySchema, ApiKeysService } from "../gen/mail/v1/api_keys_pb.js";
import { SignupFormsService } from "../gen/mail/v1/forms_pb.js";
import { ListsService } from "../gen/mail/v1/lists_pb.js";
import { ReportsService } from "../gen/mail/v1/reports_pb.js";
import { TemplatesService } from "../gen/mail/v1/templates_pb.js";
import { COMPANY_HEADER } from "../transport/connect/session-cookie.ts";
import { type Member, MemberRole, MemberSchema, MembersService } from "../gen/mail/v1/members_pb.js";
import { type FormField, FormFieldSchema, MailService } from "../gen/mail/v1/mail_pb.js";
import { type WebhookDeliveryState, WebhookDeliveryStateSchema, WebhooksService } from "../gen/mail/v1/webhooks_pb.js";
import { listen, trigger } from "./listen.ts";
import { UsageError } from "./usage.ts";
import { type CreditLedgerReason, CreditLedgerReasonSchema, CreditsService } from "../gen/mail/v1/credits_pb.js";
import { type SuppressionReason, SuppressionReasonSchema, SuppressionsService } from "../gen/mail/v1/suppressions_pb.js";
import { SendingStatusService } from "../gen/mail/v1/sending_status_pb.js";
import { DomainsService, SendersService } from "../gen/mail/v1/domains_pb.js";
import type { DescEnum } from "@bufbuild/protobuf";
import { enumJsonValues } from "../contract/json-codec.ts";

const USAGE = `usage: mailctl <command> [options]

  company create --name NAME [--api true|false] [--smtp true|false]
  company list
  company entitlements --company ID [--api true|false] [--smtp true|false]
  key create --company ID --name NAME --scope SCOPE [--scope SCOPE ...] [--expires-at ISO8601]
  key rotate --company ID --key KEY_ID [--grace-hours N]
  key revoke --company ID --key KEY_ID
  key list --company ID
  member add --company ID --email ADDRESS [--role owner|admin|member] [--display-name NAME]   (default role: owner;
             an existing member gets the role and is enabled)
  member sign-in-link --company ID --email ADDRESS          (prints a one-time link, valid 15 minutes)
  domain create --company ID --domain NAME                  (prints the DNS records to publish)
  domain verify --company ID --domain DOMAIN_ID|NAME [--override]   (checks DNS now; --override: verified
                without DNS, development only, audited)
  domain list --company ID
  domain rm --company ID --domain DOMAIN_ID|NAME           (refused while it has senders)
  sender create --company ID --email ADDRESS [--name NAME] [--default]
  sender list --company ID
  sender default --company ID --sender SENDER_ID
  sender rm --company ID --sender SENDER_ID                (not the default while there are others)
  template put --company ID --name NAME --subject TEXT --html-file PATH [--text-file PATH]
  template list --company ID
  credits add --company ID --amount N --note TEXT    (remove credits: --amount -N)
  credits show --company ID                          (the balance, the low-balance threshold, whether it is low)
  credits ledger --company ID [--reason charge|refund|grant|adjustment] [--limit N] [--cursor CURSOR]
  sending status --company ID                        (whether it may send: the guard's suspension, the last 24 hours, the limits)
  sending lift --company ID --reason TEXT            (lift the deliverability guard's suspension; audited)
  suppression list --company ID [--q PART_OF_ADDRESS] [--reason bounce|complaint|manual]
                   [--since ISO8601] [--until ISO8601] [--limit N] [--cursor CURSOR]
  suppression get --company ID --email ADDRESS
  suppression add --company ID --email ADDRESS              (a manual suppression)
  suppression remove --company ID --email ADDRESS --reason TEXT   (why it may be mailed again; audited)
  webhook list --company ID
  webhook get --company ID --endpoint ENDPOINT_ID
  webhook create --company ID --url URL --event EVENT [--event EVENT ...] [--description TEXT] [--enabled true|false]
  webhook update --company ID --endpoint ENDPOINT_ID [--url URL] [--event EVENT ...] [--description TEXT] [--enabled true|false]
  webhook delete --company ID --endpoint ENDPOINT_ID
  webhook rotate --company ID --endpoint ENDPOINT_ID          (prints the new secret once)
  webhook deliveries --company ID [--endpoint ENDPOINT_ID] [--state pending|attempting|succeeded|dead_letter]
                     [--event EVENT] [--since ISO8601] [--until ISO8601] [--limit N] [--cursor CURSOR]
  webhook delivery --company ID --delivery DELIVERY_ID      (with every attempt)
  webhook retry --company ID --delivery DELIVERY_ID         (a dead letter)
  webhook retry-dead-letters --company ID --endpoint ENDPOINT_ID --since ISO8601
  list create --company ID --name NAME                      (a contact list)
  list ls --company ID
  list rename --company ID --list LIST_ID --name NAME
  list rm --company ID --list LIST_ID                       (its contacts stay)
  form create --company ID --name NAME --consent-text TEXT --language TAG [--double-opt-in]
              [--fields-file PATH]    (a JSON array of {name, label, type, required, options};
                                       default: one required email field)
  form ls --company ID                                      (the active forms)
  form deactivate --company ID --form PUBLIC_ID
  revenue --company ID [--since ISO8601] [--until ISO8601]  (gross, refunded, net per campaign)

Developer commands, with an API key holding mail.admin (--api-key or MAIL_API_KEY; --url or MAIL_API_URL,
default http://127.0.0.1:8080) or as the operator with --company:
  listen --forward-to URL [--events EVENT,EVENT...] [--secret whsec_...]
         (posts the company's events to URL, signed with the secret it prints, until ^C)
  trigger EVENT [--endpoints]    (a test event to the listen streams; --endpoints: to the subscribed endpoints too)

Environment: MAIL_ADMIN_URL (default http://127.0.0.1:8082), OPERATOR_TOKEN, MAIL_API_KEY, MAIL_API_URL.`;

/** Commands of one word (every other command is a noun and a verb). */
const SINGLE_WORD_COMMANDS: ReadonlySet<string> = new Set(["revenue", "listen"]);

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

function flag(values: Record<string, unknown>, name: string): boolean | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (value !== "true" && value !== "false") throw new UsageError(`--${name} takes true or false`);
  return value === "true";
}

function date(values: Record<string, unknown>, name: string): Date | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  const parsed = typeof value === "string" ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(parsed.getTime())) throw new UsageError(`--${name} must be an ISO 8601 date-time`);
  return parsed;
}

function optionalTimestamp(values: Record<string, unknown>, name: string): Timestamp | undefined {
  const parsed = date(values, name);
  return parsed ? timestampFromDate(parsed) : undefined;
}

/** `--limit N`: a whole number, or absent. */
function limitOf(values: Record<string, unknown>): number | undefined {
  const text = values.limit;
  if (text === undefined) return undefined;
  const limit = Number(text);
  if (!Number.isInteger(limit)) throw new UsageError("--limit must be a whole number");
  return limit;
}

/** `--reason bounce` (a list's filter) as the value of the contract's enum `desc`. */
function reasonFilter<E extends number>(values: Record<string, unknown>, desc: DescEnum): E | undefined {
  const value = values.reason;
  if (value === undefined) return undefined;
  const reason = typeof value === "string" ? enumValueFromJson(desc, value) : undefined;
  if (reason === undefined) throw new UsageError(`--reason takes ${enumJsonValues(desc).join(", ")}`);
  return reason as E;
}

/** `--state dead_letter` as the contract's enum value. */
function deliveryState(values: Record<string, unknown>): WebhookDeliveryState | undefined {
  const value = values.state;
  if (value === undefined) return undefined;
  const state = typeof value === "string" ? enumValueFromJson(WebhookDeliveryStateSchema, value) : undefined;
  if (state === undefined) throw new UsageError("--state takes pending, attempting, succeeded or dead_letter");
  return state as WebhookDeliveryState;
}

function print<Desc extends DescMessage>(desc: Desc, message: MessageShape<Desc>): void {
  process.stdout.write(JSON.stringify(messageToPublicJson(desc, message), null, 2) + "\n");
}

/** The label of the default form's one field, per language (English otherwise). */
const EMAIL_LABEL: Readonly<Record<string, string>> = { de: "E-Mail", fr: "E-mail", es: "Correo electrónico", it: "Email", nl: "E-mailadres" };

/** `--fields-file`: a JSON array of form fields (public JSON names); without it, one required email field. */
async function formFields(values: Record<string, unknown>, language: string): Promise<FormField[]> {
  const file = values["fields-file"];
  if (typeof file !== "string") {
    const label = EMAIL_LABEL[language.split("-")[0]?.toLowerCase() ?? ""] ?? "Email";
    return [fromJson(FormFieldSchema, { name: "email", label, type: "email", required: true })];
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new UsageError(`--fields-file: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Array.isArray(parsed)) throw new UsageError("--fields-file must hold a JSON array of fields");
  return parsed.map((field: JsonValue, index) => {
    try {
      return fromJson(FormFieldSchema, field);
    } catch (error) {
      throw new UsageError(`--fields-file: field ${index}: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `--domain` takes the domain's id or, for convenience, its name. */
async function domainIdOf(domains: Client<typeof DomainsService>, companyId: string, domain: string): Promise<string> {
  if (UUID.test(domain)) return domain;
  const wanted = domain.trim().toLowerCase().replace(/\.$/, "");
  const { items } = await domains.listDomains({});
  const found = items.find((d) => d.domain === wanted);
  if (!found) throw new ApiError("NOT_FOUND", `The company has no sending domain ${wanted} (see: mailctl domain list --company ${companyId}).`);
  return found.id;
}

/**
 * `member add`: invites a new member with `role` (an operator may grant any
 * role), or gives an existing one `role` (and `displayName`, when given)
 * and enables them. Operators act through the company's MembersService.
 */
async function addMember(members: Client<typeof MembersService>, email: string, role: MemberRole, displayName: string | undefined): Promise<Member> {
  const wanted = email.trim().toLowerCase();
  let cursor: string | undefined;
  do {
    const page = await members.listMembers({ limit: 100, cursor });
    const existing = page.items.find((member) => member.email === wanted);
    if (existing) return answered((await members.updateMember({ id: existing.id, role, disabled: false, displayName })).member);
    cursor = page.nextCursor;
  } while (cursor);
  return answered((await members.inviteMember({ email, role, displayName })).member);
}

function answered(member: Member | undefined): Member {
  if (!member) throw new Error("the service answered no member");
  return member;
}

const OPTIONS = {
  name: { type: "string" },
  company: { type: "string" },
  key: { type: "string" },
  scope: { type: "string", multiple: true },
  api: { type: "string" },
  smtp: { type: "string" },
  "expires-at": { type: "string" },
  "grace-hours": { type: "string" },
  domain: { type: "string" },
  override: { type: "boolean" },
  email: { type: "string" },
  role: { type: "string" },
  "display-name": { type: "string" },
  default: { type: "boolean" },
  sender: { type: "string" },
  subject: { type: "string" },
  "html-file": { type: "string" },
  "text-file": { type: "string" },
  amount: { type: "string" },
  note: { type: "string" },
  url: { type: "string" },
  event: { type: "string", multiple: true },
  description: { type: "string" },
  enabled: { type: "string" },
  endpoint: { type: "string" },
  delivery: { type: "string" },
  state: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  limit: { type: "string" },
  cursor: { type: "string" },
  q: { type: "string" },
  reason: { type: "string" },
  list: { type: "string" },
  form: { type: "string" },
  "consent-text": { type: "string" },
  language: { type: "string" },
  "double-opt-in": { type: "boolean" },
  "fields-file": { type: "string" },
  "forward-to": { type: "string" },
  "api-key": { type: "string" },
  events: { type: "string" },
  secret: { type: "string" },
  endpoints: { type: "boolean" },
  help: { type: "boolean" },
} as const satisfies ParseArgsConfig["options"];

/**
 * Joins `--option -value` into `--option=-value` for string options:
 * public ids are base64url, so a form id may begin with "-", and a negative
 * `--amount` removes credits. node's parseArgs would otherwise refuse such a
 * value as an ambiguous option argument. A known option or the `--`
 * terminator in the value's place is left alone (a missing value stays a
 * usage error).
 */
function withDashValuesJoined(argv: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const next = argv[i + 1];
    const name = arg.startsWith("--") ? arg.slice(2) : "";
    const option = Object.hasOwn(OPTIONS, name) ? OPTIONS[name as keyof typeof OPTIONS] : undefined;
    if (option?.type === "string" && next !== undefined && next.startsWith("-") && !isOptionName(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

function isOptionName(arg: string): boolean {
  return arg === "--" || (arg.startsWith("--") && Object.hasOwn(OPTIONS, arg.slice(2).split("=")[0] ?? ""));
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: withDashValuesJoined(argv), allowPositionals: true, options: OPTIONS });
  // Every command is two words (`list ls`) except the one-word reports.
  const single = positionals.length === 1 && SINGLE_WORD_COMMANDS.has(positionals[0] ?? "");
  if (values.help || (positionals.length < 2 && !single)) throw new UsageError("");
  // A developer's commands: an API key or the operator token.
  if (positionals[0] === "listen") return listen(values);
  if (positionals[0] === "trigger") return trigger(positionals[1] ?? "", values);

  const token = process.env.OPERATOR_TOKEN;
  if (!token) throw new UsageError("set OPERATOR_TOKEN to the service's operator token");
  const operator: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
  // The operator listener (OPERATOR_HOST:OPERATOR_PORT); the public ports do not serve the AdminService.
  const baseUrl = process.env.MAIL_ADMIN_URL ?? "http://127.0.0.1:8082";
  const admin = createClient(AdminService, createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [operator] }));
  const output = AdminService.method;
  /** A company service, acting for `--company` (the operator token plus x-mail-company-id). */
  const forCompany = <S extends DescService>(service: S): Client<S> => {
    const companyId = required(values, "company");
    const company: Interceptor = (next) => (req) => {
      req.header.set(COMPANY_HEADER, companyId);
      return next(req);
    };
    return createClient(service, createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [operator, company] }));
  };

  const command = single ? (positionals[0] ?? "") : `${positionals[0]} ${positionals[1]}`;
  switch (command) {
    case "company create": {
      const entitlements = { api: flag(values, "api") ?? true, smtp: flag(values, "smtp") ?? false };
      return print(output.createCompany.output, await admin.createCompany({ name: required(values, "name"), entitlements }));
    }
    case "company list":
      return print(output.listCompanies.output, await admin.listCompanies({}));
    case "company entitlements": {
      const companyId = required(values, "company");
      const current = (await admin.listCompanies({})).companies.find((c) => c.id === companyId)?.entitlements;
      const entitlements = {
        api: flag(values, "api") ?? current?.api ?? true,
        smtp: flag(values, "smtp") ?? current?.smtp ?? false,
      };
      return print(output.setEntitlements.output, await admin.setEntitlements({ companyId, entitlements }));
    }
    case "key create": {
      const expires = values["expires-at"];
      const expiresAt = expires ? new Date(expires) : undefined;
      if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new UsageError("--expires-at must be an ISO 8601 date-time");
      const scopes = values.scope ?? [];
      if (scopes.length === 0) throw new UsageError("--scope is required (repeat it for several scopes)");
      const response = await forCompany(ApiKeysService).createApiKey({
        name: required(values, "name"),
        scopes,
        expiresAt: expiresAt ? timestampFromDate(expiresAt) : undefined,
      });
      return print(ApiKeysService.method.createApiKey.output, response);
    }
    case "key rotate": {
      const grace = values["grace-hours"];
      const graceHours = grace === undefined ? undefined : Number(grace);
      if (graceHours !== undefined && (!Number.isInteger(graceHours) || graceHours < 0)) {
        throw new UsageError("--grace-hours must be a non-negative integer");
      }
      const response = await forCompany(ApiKeysService).rotateApiKey({ id: required(values, "key"), graceHours });
      return print(ApiKeysService.method.rotateApiKey.output, response);
    }
    case "key revoke":
      return print(
        ApiKeysService.method.revokeApiKey.output,
        await forCompany(ApiKeysService).revokeApiKey({ id: required(values, "key") }),
      );
    case "member add": {
      const roles: Record<string, MemberRole> = { owner: MemberRole.OWNER, admin: MemberRole.ADMIN, member: MemberRole.MEMBER };
      const role = roles[values.role ?? "owner"];
      if (role === undefined) throw new UsageError("--role must be owner, admin or member");
      const member = await addMember(forCompany(MembersService), required(values, "email"), role, values["display-name"]);
      process.stdout.write(JSON.stringify({ member: messageToPublicJson(MemberSchema, member) }, null, 2) + "\n");
      return;
    }
    case "member sign-in-link":
      return print(
        output.createSignInLink.output,
        await admin.createSignInLink({ companyId: required(values, "company"), email: required(values, "email") }),
      );
    case "key list": {
      // The whole key table, as mailctl has always printed it: `{ "keys": [...] }`.
      const keys = forCompany(ApiKeysService);
      const items: ApiKey[] = [];
      let cursor: string | undefined;
      do {
        const page = await keys.listApiKeys({ limit: 100, cursor });
        items.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      process.stdout.write(JSON.stringify({ keys: items.map((key) => messageToPublicJson(ApiKeySchema, key)) }, null, 2) + "\n");
      return;
    }
    case "domain create":
      return print(DomainsService.method.createDomain.output, await forCompany(DomainsService).createDomain({ domain: required(values, "domain") }));
    case "domain verify": {
      const companyId = required(values, "company");
      const domainId = await domainIdOf(forCompany(DomainsService), companyId, required(values, "domain"));
      if (values.override === true) {
        return print(output.overrideDomainVerification.output, await admin.overrideDomainVerification({ companyId, domainId }));
      }
      return print(DomainsService.method.checkDomain.output, await forCompany(DomainsService).checkDomain({ id: domainId }));
    }
    case "domain list":
      return print(DomainsService.method.listDomains.output, await forCompany(DomainsService).listDomains({}));
    case "domain rm": {
      const domainId = await domainIdOf(forCompany(DomainsService), required(values, "company"), required(values, "domain"));
      return print(DomainsService.method.deleteDomain.output, await forCompany(DomainsService).deleteDomain({ id: domainId }));
    }
    case "sender create":
      return print(
        SendersService.method.createSender.output,
        await forCompany(SendersService).createSender({ email: required(values, "email"), name: values.name, makeDefault: values.default === true }),
      );
    case "sender list":
      return print(SendersService.method.listSenders.output, await forCompany(SendersService).listSenders({}));
    case "sender default":
      return print(SendersService.method.setDefaultSender.output, await forCompany(SendersService).setDefaultSender({ id: required(values, "sender") }));
    case "sender rm":
      return print(SendersService.method.deleteSender.output, await forCompany(SendersService).deleteSender({ id: required(values, "sender") }));
    case "template put": {
      const html = await readFile(required(values, "html-file"), "utf8");
      const textFile = values["text-file"];
      const text = textFile ? await readFile(textFile, "utf8") : undefined;
      const response = await forCompany(TemplatesService).putTemplate({
        name: required(values, "name"),
        subject: required(values, "subject"),
        html,
        text,
      });
      return print(TemplatesService.method.putTemplate.output, response);
    }
    case "template list":
      return print(TemplatesService.method.listTemplates.output, await forCompany(TemplatesService).listTemplates({}));
    case "credits add": {
      const amount = required(values, "amount");
      if (!/^-?\d+$/.test(amount)) throw new UsageError("--amount must be a whole number (negative removes credits: --amount -5)");
      const response = await admin.adjustCredits({ companyId: required(values, "company"), amount: BigInt(amount), note: required(values, "note") });
      return print(output.adjustCredits.output, response);
    }
    case "credits show":
      return print(CreditsService.method.getCredits.output, await forCompany(CreditsService).getCredits({}));
    case "credits ledger": {
      const response = await forCompany(CreditsService).listCreditLedger({
        reason: reasonFilter<CreditLedgerReason>(values, CreditLedgerReasonSchema),
        limit: limitOf(values),
        cursor: values.cursor,
      });
      return print(CreditsService.method.listCreditLedger.output, response);
    }
    case "sending status":
      return print(SendingStatusService.method.getSendingStatus.output, await forCompany(SendingStatusService).getSendingStatus({}));
    case "sending lift":
      return print(
        output.liftSendingSuspension.output,
        await admin.liftSendingSuspension({ companyId: required(values, "company"), reason: required(values, "reason") }),
      );
    case "suppression list": {
      const response = await forCompany(SuppressionsService).listSuppressions({
        q: values.q,
        reason: reasonFilter<SuppressionReason>(values, SuppressionReasonSchema),
        since: optionalTimestamp(values, "since"),
        until: optionalTimestamp(values, "until"),
        limit: limitOf(values),
        cursor: values.cursor,
      });
      return print(SuppressionsService.method.listSuppressions.output, response);
    }
    case "suppression get":
      return print(
        SuppressionsService.method.getSuppression.output,
        await forCompany(SuppressionsService).getSuppression({ email: required(values, "email") }),
      );
    case "suppression add":
      return print(
        SuppressionsService.method.addSuppression.output,
        await forCompany(SuppressionsService).addSuppression({ email: required(values, "email") }),
      );
    case "suppression remove":
      return print(
        SuppressionsService.method.removeSuppression.output,
        await forCompany(SuppressionsService).removeSuppression({ email: required(values, "email"), reason: required(values, "reason") }),
      );
    case "webhook list":
      return print(WebhooksService.method.listWebhookEndpoints.output, await forCompany(WebhooksService).listWebhookEndpoints({}));
    case "webhook get":
      return print(
        WebhooksService.method.getWebhookEndpoint.output,
        await forCompany(WebhooksService).getWebhookEndpoint({ id: required(values, "endpoint") }),
      );
    case "webhook create": {
      const events = values.event ?? [];
      if (events.length === 0) throw new UsageError("--event is required (repeat it for several events)");
      const response = await forCompany(WebhooksService).createWebhookEndpoint({
        url: required(values, "url"),
        events,
        description: values.description,
        enabled: flag(values, "enabled"),
      });
      return print(WebhooksService.method.createWebhookEndpoint.output, response);
    }
    case "webhook update": {
      const response = await forCompany(WebhooksService).updateWebhookEndpoint({
        id: required(values, "endpoint"),
        url: values.url,
        events: values.event ?? [],
        description: values.description,
        enabled: flag(values, "enabled"),
      });
      return print(WebhooksService.method.updateWebhookEndpoint.output, response);
    }
    case "webhook delete":
      return print(
        WebhooksService.method.deleteWebhookEndpoint.output,
        await forCompany(WebhooksService).deleteWebhookEndpoint({ id: required(values, "endpoint") }),
      );
    case "webhook rotate":
      return print(
        WebhooksService.method.rotateWebhookSecret.output,
        await forCompany(WebhooksService).rotateWebhookSecret({ id: required(values, "endpoint") }),
      );
    case "webhook deliveries": {
      if ((values.event?.length ?? 0) > 1) throw new UsageError("webhook deliveries takes one --event");
      const response = await forCompany(WebhooksService).listWebhookDeliveries({
        endpointId: values.endpoint,
        state: deliveryState(values),
        event: values.event?.[0],
        since: optionalTimestamp(values, "since"),
        until: optionalTimestamp(values, "until"),
        limit: limitOf(values),
        cursor: values.cursor,
      });
      return print(WebhooksService.method.listWebhookDeliveries.output, response);
    }
    case "webhook delivery":
      return print(
        WebhooksService.method.getWebhookDelivery.output,
        await forCompany(WebhooksService).getWebhookDelivery({ id: required(values, "delivery") }),
      );
    case "webhook retry":
      return print(
        WebhooksService.method.retryWebhookDelivery.output,
        await forCompany(WebhooksService).retryWebhookDelivery({ id: required(values, "delivery") }),
      );
    case "webhook retry-dead-letters": {
      const since = optionalTimestamp(values, "since");
      if (!since) throw new UsageError("--since is required");
      const response = await forCompany(WebhooksService).retryWebhookDeadLetters({
        id: required(values, "endpoint"),
        since,
      });
      return print(WebhooksService.method.retryWebhookDeadLetters.output, response);
    }
    case "list create":
      return print(
        ListsService.method.createContactList.output,
        await forCompany(ListsService).createContactList({ name: required(values, "name") }),
      );
    case "list ls":
      return print(ListsService.method.listContactLists.output, await forCompany(ListsService).listContactLists({}));
    case "list rename":
      return print(
        ListsService.method.renameContactList.output,
        await forCompany(ListsService).renameContactList({ id: required(values, "list"), name: required(values, "name") }),
      );
    case "list rm":
      return print(
        ListsService.method.deleteContactList.output,
        await forCompany(ListsService).deleteContactList({ id: required(values, "list") }),
      );
    case "form create": {
      const language = required(values, "language");
      const response = await forCompany(SignupFormsService).createForm({
        name: required(values, "name"),
        consentText: required(values, "consent-text"),
        language,
        doubleOptIn: values["double-opt-in"] === true,
        fields: await formFields(values, language),
      });
      return print(SignupFormsService.method.createForm.output, response);
    }
    case "form ls":
      return print(MailService.method.listForms.output, await forCompany(MailService).listForms({}));
    case "form deactivate":
      return print(
        SignupFormsService.method.deactivateForm.output,
        await forCompany(SignupFormsService).deactivateForm({ publicId: required(values, "form") }),
      );
    case "revenue": {
      const response = await forCompany(ReportsService).getRevenueByCampaign({
        since: optionalTimestamp(values, "since"),
        until: optionalTimestamp(values, "until"),
      });
      return print(ReportsService.method.getRevenueByCampaign.output, response);
    }
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    if (error.message) process.stderr.write(`mailctl: ${error.message}\n\n`);
    process.stderr.write(USAGE + "\n");
    process.exit(2);
  }
  const known = apiErrorFrom(error);
  const body = known
    ? { error: { code: known.code, message: known.message } }
    : { error: { code: "CLIENT_ERROR", message: error instanceof Error ? error.message : String(error) } };
  process.stderr.write(JSON.stringify(body) + "\n");
  process.exit(1);
});
