import { type DescMethod, type DescService, getOption } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messageFromPublicJson } from "../../src/contract/json-codec.ts";
import { http } from "../../src/gen/google/api/annotations_pb.js";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { AuditService } from "../../src/gen/mail/v1/audit_pb.js";
import { CampaignsService } from "../../src/gen/mail/v1/campaigns_pb.js";
import { CreditsService } from "../../src/gen/mail/v1/credits_pb.js";
import { DomainsService, SendersService } from "../../src/gen/mail/v1/domains_pb.js";
import { StatsService } from "../../src/gen/mail/v1/stats_pb.js";
import { SignupFormsService } from "../../src/gen/mail/v1/forms_pb.js";
import { IntegrationsService } from "../../src/gen/mail/v1/integrations_pb.js";
import { ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { MembersService } from "../../src/gen/mail/v1/members_pb.js";
import { MessageContentService } from "../../src/gen/mail/v1/message_content_pb.js";
import { operator_only, refuse_api_keys } from "../../src/gen/mail/v1/options_pb.js";
import { ReportsService } from "../../src/gen/mail/v1/reports_pb.js";
import { SendingStatusService } from "../../src/gen/mail/v1/sending_status_pb.js";
import { SuppressionsService } from "../../src/gen/mail/v1/suppressions_pb.js";
import { TemplatesService } from "../../src/gen/mail/v1/templates_pb.js";
import { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { ALL_SCOPES, type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { loopbackDelivery, type RoutedReceiver, startRoutedReceiver } from "../webhooks/api-support.ts";

/**
 * Tenant isolation, driven by the contract: every company RPC whose request
 * names a record (an id, a public id, an address or a name that keys a
 * company's records) is called by another company with the first company's
 * real records, over gRPC and, where the contract routes it, over REST with
 * that company's key. Each answers NOT_FOUND (404), and the first company's
 * records read the same before and after. A new RPC that names a record
 * fails the first test until it is listed here, one way or the other.
 */

/** The company services, as the server registers them (SessionService has no company records). */
const SERVICES: readonly DescService[] = [
  MailService,
  ApiKeysService,
  AuditService,
  CreditsService,
  SignupFormsService,
  IntegrationsService,
  ListsService,
  MembersService,
  MessageContentService,
  ReportsService,
  SuppressionsService,
  TemplatesService,
  WebhooksService,
  CampaignsService,
  SendingStatusService,
  DomainsService,
  SendersService,
  StatsService,
];

/** The first company's records the requests below name. */
interface Records {
  readonly keyId: string;
  readonly listId: string;
  readonly formPublicId: string;
  readonly integrationId: string;
  readonly messageId: string;
  readonly senderId: string;
  readonly contactId: string;
  readonly contactEmail: string;
  readonly memberId: string;
  readonly endpointId: string;
  readonly deliveryId: string;
  readonly suppressedEmail: string;
  readonly templateName: string;
  readonly campaignId: string;
  readonly domainId: string;
}

type Request = Record<string, unknown>;

/** RPCs that name another company's record: the request (public JSON, as on the REST routes), and the answer is NOT_FOUND. */
const NAMES_A_RECORD: Readonly<Record<string, (r: Records) => Request>> = {
  "mail.v1.ApiKeysService.RotateApiKey": (r) => ({ id: r.keyId }),
  "mail.v1.ApiKeysService.RevokeApiKey": (r) => ({ id: r.keyId }),
  "mail.v1.SignupFormsService.DeactivateForm": (r) => ({ publicId: r.formPublicId }),
  "mail.v1.IntegrationsService.PushOrder": (r) => ({
    integrationId: r.integrationId,
    order: {
      id: 1001,
      status: "processing",
      currency: "EUR",
      total: "49.90",
      line_items: [{ name: "Mug", quantity: 2, total: "49.90" }],
      billing: { email: "buyer@customer.example" },
      date_created: "2026-11-20T10:00:00Z",
    },
  }),
  "mail.v1.ListsService.RenameContactList": (r) => ({ id: r.listId, name: "Taken over" }),
  "mail.v1.ListsService.DeleteContactList": (r) => ({ id: r.listId }),
  "mail.v1.MailService.GetMessage": (r) => ({ id: r.messageId }),
  "mail.v1.MailService.SendMessage": (r) => ({
    to: "buyer@customer.example",
    subject: "Hello",
    html: "<p>Hi</p>",
    senderId: r.senderId,
  }),
  "mail.v1.MailService.ListContacts": (r) => ({ listId: r.listId }),
  "mail.v1.MailService.GetContact": (r) => ({ id: r.contactId }),
  "mail.v1.MailService.UpsertContact": (r) => ({ email: "new@customer.example", listIds: [r.listId] }),
  "mail.v1.MailService.RecordConversion": (r) => ({ eventId: "conversion-1", eventType: "purchase", contactId: r.contactId }),
  "mail.v1.MembersService.UpdateMember": (r) => ({ id: r.memberId, role: "admin" }),
  "mail.v1.MembersService.RemoveMember": (r) => ({ id: r.memberId }),
  "mail.v1.MembersService.EndMemberSessions": (r) => ({ id: r.memberId }),
  "mail.v1.MessageContentService.GetMessageContent": (r) => ({ id: r.messageId }),
  "mail.v1.MessageContentService.GetMessageAttachment": (r) => ({ messageId: r.messageId, position: 0 }),
  "mail.v1.ReportsService.ListContactConversions": (r) => ({ contactId: r.contactId }),
  "mail.v1.SuppressionsService.GetSuppression": (r) => ({ email: r.suppressedEmail }),
  "mail.v1.SuppressionsService.RemoveSuppression": (r) => ({ email: r.suppressedEmail, reason: "taken over" }),
  "mail.v1.WebhooksService.GetWebhookEndpoint": (r) => ({ id: r.endpointId }),
  "mail.v1.WebhooksService.UpdateWebhookEndpoint": (r) => ({ id: r.endpointId, description: "taken over" }),
  "mail.v1.WebhooksService.DeleteWebhookEndpoint": (r) => ({ id: r.endpointId }),
  "mail.v1.WebhooksService.RotateWebhookSecret": (r) => ({ id: r.endpointId }),
  "mail.v1.WebhooksService.ListWebhookDeliveries": (r) => ({ endpointId: r.endpointId }),
  "mail.v1.WebhooksService.GetWebhookDelivery": (r) => ({ id: r.deliveryId }),
  "mail.v1.WebhooksService.RetryWebhookDelivery": (r) => ({ id: r.deliveryId }),
  "mail.v1.WebhooksService.RetryWebhookDeadLetters": (r) => ({ id: r.endpointId, since: "2020-01-01T00:00:00Z" }),
  "mail.v1.WebhooksService.SendTestWebhookEvent": (r) => ({ id: r.endpointId, event: "sent" }),
  "mail.v1.CampaignsService.CreateCampaign": (r) => ({
    name: "Borrowed audience",
    audience: { listIds: [r.listId] },
    content: { subject: "Hi", html: "<p>Hi</p>" },
  }),
  "mail.v1.CampaignsService.UpdateCampaign": (r) => ({ id: r.campaignId, name: "Taken over" }),
  "mail.v1.CampaignsService.GetCampaign": (r) => ({ id: r.campaignId }),
  "mail.v1.CampaignsService.PreviewCampaignAudience": (r) => ({ id: r.campaignId }),
  "mail.v1.CampaignsService.SendCampaignTest": (r) => ({ id: r.campaignId }),
  "mail.v1.CampaignsService.ScheduleCampaign": (r) => ({ id: r.campaignId, sendAt: "2099-01-01T00:00:00Z" }),
  "mail.v1.CampaignsService.PauseCampaign": (r) => ({ id: r.campaignId }),
  "mail.v1.CampaignsService.ResumeCampaign": (r) => ({ id: r.campaignId }),
  "mail.v1.CampaignsService.CancelCampaign": (r) => ({ id: r.campaignId }),
  "mail.v1.CampaignsService.GetCampaignResults": (r) => ({ id: r.campaignId }),
  "mail.v1.DomainsService.GetDomain": (r) => ({ id: r.domainId }),
  "mail.v1.DomainsService.CheckDomain": (r) => ({ id: r.domainId }),
  "mail.v1.DomainsService.DeleteDomain": (r) => ({ id: r.domainId }),
  "mail.v1.SendersService.SetDefaultSender": (r) => ({ id: r.senderId }),
  "mail.v1.SendersService.DeleteSender": (r) => ({ id: r.senderId }),
  "mail.v1.TemplatesService.GetTemplate": (r) => ({ name: r.templateName }),
  "mail.v1.TemplatesService.DeleteTemplate": (r) => ({ name: r.templateName }),
  "mail.v1.TemplatesService.ListTemplateVersions": (r) => ({ templateId: r.templateName }),
  "mail.v1.TemplatesService.RestoreTemplateVersion": (r) => ({ templateId: r.templateName, version: 1 }),
  "mail.v1.TemplatesService.PreviewTemplate": (r) => ({ templateId: r.templateName }),
  "mail.v1.TemplatesService.SendTestTemplate": (r) => ({ templateId: r.templateName }),
};

/**
 * The RPCs whose answer to another company's record is not NOT_FOUND, and
 * why it still tells nothing: the same answer as for an id that exists nowhere.
 */
const ANSWERED_OTHERWISE: Readonly<Record<string, { grpc: string; rest: string; why: string }>> = {
  "mail.v1.CampaignsService.CreateCampaign": { grpc: "InvalidArgument", rest: "400", why: "an unknown list in the audience is a field error (400 naming audience.listIds)" },
  "mail.v1.WebhooksService.ListWebhookDeliveries": { grpc: "empty", rest: "empty", why: "endpointId filters the caller's own deliveries: another company's endpoint lists nothing" },
};

/** RPCs whose id-like fields are not references to a record of another company, and why. */
const NAMES_NO_RECORD: Readonly<Record<string, string>> = {
  "mail.v1.ApiKeysService.CreateApiKey": "name is the new key's label",
  "mail.v1.SignupFormsService.CreateForm": "name is the new form's label",
  "mail.v1.ListsService.CreateContactList": "name is the new list's label",
  "mail.v1.MembersService.InviteMember": "email is the invited person's address, looked up within the caller's company",
  "mail.v1.SuppressionsService.AddSuppression": "email is added to the caller's own list",
  "mail.v1.TemplatesService.PutTemplate": "name keys the caller's own templates (another company's name makes the caller's own template)",
  "mail.v1.SendersService.CreateSender": "email is the new sender's address, on one of the caller's own verified domains",
  "mail.v1.StatsService.GetStats": "templateId filters the caller's own counts: another company's template counts nothing",
};

/** The names of request fields that may name a record. */
const RECORD_FIELD = /(^|_)id$|_ids$|^email$|^name$/;

function recordFields(method: DescMethod): string[] {
  return method.input.fields.filter((field) => RECORD_FIELD.test(field.name)).map((field) => field.name);
}

function methodsOf(service: DescService): DescMethod[] {
  return getOption(service, operator_only) ? [] : service.methods.filter((method) => method.methodKind === "unary");
}

function fullName(method: DescMethod): string {
  return `${method.parent.typeName}.${method.name}`;
}

type UnaryCall = (request: Request) => Promise<unknown>;

/** The method over Connect as the operator acting for `companyId`; the request in public JSON. */
function call(h: ApiHarness, method: DescMethod, companyId: string): UnaryCall {
  const client = h.forCompany(method.parent, companyId) as unknown as Record<string, (request: unknown) => Promise<unknown>>;
  const fn = client[method.localName];
  if (!fn) throw new Error(`no client method for ${fullName(method)}`);
  return (request) => fn.call(client, messageFromPublicJson(method.input, request));
}

function isEmptyList(answer: unknown): boolean {
  return typeof answer === "object" && answer !== null && "items" in answer && Array.isArray(answer.items) && answer.items.length === 0;
}

/** The REST route of a method with its path variables filled from the request, or undefined. */
function restRoute(method: DescMethod, request: Request): { verb: string; path: string; body: Request | undefined } | undefined {
  const rule = getOption(method, http);
  const pattern = rule.pattern;
  if (pattern.case === undefined || pattern.case === "custom") return undefined;
  const template = pattern.value;
  const used = new Set<string>();
  const path = template.replace(/\{([a-z_]+)\}/g, (_, snake: string) => {
    const camel = snake.replace(/_([a-z])/g, (__, c: string) => c.toUpperCase());
    used.add(camel);
    return encodeURIComponent(String(request[camel] ?? ""));
  });
  const rest = Object.fromEntries(Object.entries(request).filter(([key]) => !used.has(key)));
  if (pattern.case === "get" || pattern.case === "delete") {
    const query = new URLSearchParams(Object.entries(rest).map(([key, value]): [string, string] => [key, String(value)]));
    return { verb: pattern.case.toUpperCase(), path: query.size > 0 ? `${path}?${query}` : path, body: undefined };
  }
  const body = rule.body === "*" ? rest : (rest[rule.body.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())] as Request | undefined);
  return { verb: pattern.case.toUpperCase(), path, body };
}

describe("tenant isolation, every company RPC from the contract", () => {
  let h: ApiHarness;
  let hooks: RoutedReceiver;
  let owner: { companyId: string; keyId: string; secret: string };
  let intruder: { companyId: string; keyId: string; secret: string };
  let records: Records;

  beforeAll(async () => {
    hooks = await startRoutedReceiver();
    h = await startApiHarness({}, { webhookDelivery: loopbackDelivery(hooks.certificate) });
    owner = await h.newCompanyWithKey(ALL_SCOPES, "Owner");
    intruder = await h.newCompanyWithKey(ALL_SCOPES, "Intruder");
    const as = (method: DescMethod) => async <T>(request: Request) => (await call(h, method, owner.companyId)(request)) as T;

    const { domain } = await h.admin.createSendingDomain({ companyId: owner.companyId, domain: "owner-shop.example" });
    await h.admin.verifySendingDomain({ companyId: owner.companyId, domainId: domain?.id ?? "", override: true });
    const { sender } = await h.admin.createSender({ companyId: owner.companyId, email: "receipts@owner-shop.example", makeDefault: true });
    await h.admin.adjustCredits({ companyId: owner.companyId, amount: 10n, note: "test" });
    type Id = { id: string };
    const { list } = await as(ListsService.method.createContactList)<{ list: Id }>({ name: "Owner's list" });
    const { form } = await as(SignupFormsService.method.createForm)<{ form: { publicId: string } }>({
      name: "Owner's form",
      fields: [{ name: "email", label: "Email", type: "email", required: true }],
      consentText: "Yes",
      language: "en",
    });
    const { integration } = await as(IntegrationsService.method.connectStore)<{ integration: Id }>({ provider: "woocommerce", siteUrl: "https://owner-shop.example" });
    const contact = await as(MailService.method.upsertContact)<Id>({ email: "reader@customer.example", listIds: [list.id] });
    const sent = await as(MailService.method.sendMessage)<Id>({ to: "buyer@customer.example", subject: "Receipt", html: "<p>Thanks</p>" });
    const { member } = await as(MembersService.method.inviteMember)<{ member: Id }>({ email: "colleague@owner-shop.example", role: "member" });
    const { endpoint } = await as(WebhooksService.method.createWebhookEndpoint)<{ endpoint: Id }>({ url: hooks.urlFor("/owner"), events: ["delivered"] });
    // A dead letter of the owner's, as five failed attempts leave it (no worker runs here).
    const dead = await h.db.query<{ id: string }>(
      `with e as (
         insert into webhook_event (company_id, event, occurred_at, data, dedupe_key, fanned_out_at)
         values ($1, 'delivered', now(), '{}', 'isolation-event', now()) returning id
       )
       insert into webhook_delivery (company_id, endpoint_id, event_id, event, occurred_at, state, attempt_count, workflow_started_at)
       select $1, $2, e.id, 'delivered', now(), 'dead_letter', 5, now() from e returning id`,
      [owner.companyId, endpoint.id],
    );
    const deliveries = { items: dead.rows };
    await as(SuppressionsService.method.addSuppression)({ email: "gone@customer.example" });
    await as(TemplatesService.method.putTemplate)({ name: "receipt", subject: "Receipt", html: "<p>{{name}}</p>" });
    const { campaign } = await as(CampaignsService.method.createCampaign)<{ campaign: Id }>({
      name: "Owner's campaign",
      audience: { listIds: [list.id] },
      content: { subject: "News", html: "<p>News</p>" },
    });
    records = {
      keyId: owner.keyId,
      listId: list.id,
      formPublicId: form.publicId,
      integrationId: integration.id,
      messageId: sent.id,
      senderId: sender?.id ?? "",
      contactId: contact.id,
      contactEmail: "reader@customer.example",
      memberId: member.id,
      endpointId: endpoint.id,
      deliveryId: deliveries.items[0]?.id ?? "",
      suppressedEmail: "gone@customer.example",
      templateName: "receipt",
      campaignId: campaign.id,
      domainId: domain?.id ?? "",
    };
    for (const [name, value] of Object.entries(records)) expect(value, name).not.toBe("");
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await hooks?.close();
  });

  it("lists every company RPC that names a record, one way or the other", () => {
    const unlisted = SERVICES.flatMap(methodsOf)
      .filter((method) => recordFields(method).length > 0)
      .map(fullName)
      .filter((name) => !(name in NAMES_A_RECORD) && !(name in NAMES_NO_RECORD));
    expect(unlisted).toEqual([]);
    const known = new Set(SERVICES.flatMap(methodsOf).map(fullName));
    expect([...Object.keys(NAMES_A_RECORD), ...Object.keys(NAMES_NO_RECORD)].filter((name) => !known.has(name))).toEqual([]);
  });

  it("another company gets NOT_FOUND for each of them, over gRPC and REST, and the owner's records read the same", async () => {
    const reads = SERVICES.flatMap(methodsOf).filter(
      (method) => method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS && recordFields(method).length === 0,
    );
    // A read's window ("the last 24 hours") moves with the clock; the records in it must not.
    const withoutWindows = (value: unknown): unknown =>
      JSON.parse(JSON.stringify(value, (key, v: unknown) => (["from", "since", "until", "to"].includes(key) ? undefined : typeof v === "bigint" ? String(v) : v)));
    const snapshot = async () =>
      withoutWindows(
        Object.fromEntries(
          await Promise.all(reads.map(async (method) => [fullName(method), await call(h, method, owner.companyId)({}).catch((e: unknown) => String(e))])),
        ),
      );
    const before = await snapshot();
    // What the owner reads by id, too.
    const byId = async () => withoutWindows([
      await call(h, MailService.method.getMessage, owner.companyId)({ id: records.messageId }),
      await call(h, MailService.method.getContact, owner.companyId)({ id: records.contactId }),
      await call(h, WebhooksService.method.getWebhookEndpoint, owner.companyId)({ id: records.endpointId }),
      await call(h, WebhooksService.method.getWebhookDelivery, owner.companyId)({ id: records.deliveryId }),
      await call(h, SuppressionsService.method.getSuppression, owner.companyId)({ email: records.suppressedEmail }),
      await call(h, CampaignsService.method.getCampaign, owner.companyId)({ id: records.campaignId }),
    ]);
    const beforeById = await byId();

    const answers: Record<string, string> = {};
    for (const method of SERVICES.flatMap(methodsOf)) {
      const request = NAMES_A_RECORD[fullName(method)]?.(records);
      if (!request) continue;
      const grpc = await call(h, method, intruder.companyId)(request).then(
        (answer) => (isEmptyList(answer) ? "empty" : "answered"),
        (error: unknown) => (error instanceof ConnectError ? Code[error.code] : String(error)),
      );
      answers[`gRPC ${fullName(method)}`] = grpc ?? "";
      const route = getOption(method.parent, refuse_api_keys) ? undefined : restRoute(method, request);
      if (route) {
        const response = await h.fetch(route.path, {
          method: route.verb,
          headers: { authorization: `Bearer ${intruder.secret}`, ...(route.body ? { "content-type": "application/json" } : {}) },
          ...(route.body ? { body: JSON.stringify(route.body, (_, value: unknown) => (typeof value === "bigint" ? String(value) : value)) } : {}),
        });
        const body: unknown = response.status === 200 ? await response.json() : undefined;
        answers[`REST ${fullName(method)}`] = isEmptyList(body) ? "empty" : String(response.status);
      }
    }
    const expected = (key: string): string => {
      const [door, name = ""] = key.split(" ");
      const otherwise = ANSWERED_OTHERWISE[name];
      if (otherwise) return door === "gRPC" ? otherwise.grpc : otherwise.rest;
      return door === "gRPC" ? "NotFound" : "404";
    };
    const refused = Object.entries(answers).filter(([key, answer]) => answer !== expected(key));
    expect(refused).toEqual([]);
    // Enough of the contract was walked that a regression in one store shows.
    expect(Object.keys(answers).length).toBeGreaterThan(40);

    expect(await snapshot()).toEqual(before);
    expect(await byId()).toEqual(beforeById);
  });
});
