import { type DescMethod, type JsonValue, ScalarType } from "@bufbuild/protobuf";
import { SignupFormsService } from "../../src/gen/mail/v1/forms_pb.js";
import { DomainsService, SendersService } from "../../src/gen/mail/v1/domains_pb.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpBinding, operationsOf } from "../../src/contract/routes.ts";
import { fieldNamesOf, grpcProblems, outcomeOf, restProblems } from "./support/answers.ts";
import { hostileString, mutatedJson, protoInitOf, unpairedSurrogate, withNul } from "./support/arbitraries.ts";
import { type HostileApi, KEY_SERVICES, PUBLIC_HOOK_HOST, startHostileApi } from "./support/hostile-api.ts";
import { type SeededTenant, seedTenant } from "./support/seed.ts";

/**
 * Every request schema an API key reaches (every RPC of MailService,
 * ListsService, WebhooksService and IntegrationsService, read from the
 * descriptors) under random and mutated input, through the REST bridge
 * (path, query and JSON body) and over gRPC (typed messages with hostile
 * values, including what JSON cannot carry: out-of-range timestamps,
 * unknown enum numbers, 64-bit extremes).
 *
 * The property: no input yields a 5xx, an INTERNAL (or UNKNOWN) code or a
 * stack trace; every error is in the documented shape; every rejection of
 * the input is a 400 VALIDATION_ERROR (INVALID_ARGUMENT) whose message
 * names the field as the caller wrote it.
 *
 * Runs per RPC and door: HOSTILE_RUNS (default 20); a failure prints the
 * seed to replay it (fast-check's `seed` and `path`).
 */
const RUNS = Number(process.env.HOSTILE_RUNS ?? 20);

/** Statuses a hostile but authenticated request may get: success, or a documented refusal of the input or the state. */
const EXPECTED_STATUSES = new Set([200, 201, 202, 400, 402, 404, 409, 413]);

/** A template of the tenant that the reads and previews find. */
const SEEDED_TEMPLATE = "seeded-template";

let api: HostileApi;
let tenant: SeededTenant;
/** A list, an endpoint, a form, a domain and a sender for the deletions, so that the other RPCs keep theirs. */
let doomed: { listId: string; endpointId: string; formPublicId: string; domainId: string; senderId: string };
/** A draft campaign of the tenant. */
let campaignId: string;

beforeAll(async () => {
  api = await startHostileApi();
  tenant = await seedTenant(api, "Schemas", 1);
  const list = await api.rest(tenant, "POST", "/mail/v1/lists", { name: "to be deleted" });
  const endpoint = await api.rest(tenant, "POST", "/mail/v1/webhooks", { url: `https://${PUBLIC_HOOK_HOST}/doomed`, events: ["sent"] });
  const { form } = await api.h.forCompany(SignupFormsService, tenant.companyId).createForm({ name: "Doomed", fields: [{ name: "email", label: "Email", type: "email", required: true }], consentText: "Yes", language: "en" });
  await api.rest(tenant, "PUT", `/mail/v1/templates/${SEEDED_TEMPLATE}`, { subject: "Hello {{ name }}", html: "<p>Hi {{ name }}</p>" });
  const campaign = await api.rest(tenant, "POST", "/mail/v1/campaigns", { name: "Prop", audience: { listIds: [tenant.listId] }, content: { subject: "Hi", html: "<p>Hi</p>" } });
  campaignId = (campaign.json as { campaign: { id: string } }).campaign.id;
  const { domain } = await api.h.forCompany(DomainsService, tenant.companyId).createDomain({ domain: "doomed-schemas.example" });
  const { sender } = await api.h.forCompany(SendersService, tenant.companyId).createSender({ email: `doomed@${tenant.domainName}` });
  doomed = {
    domainId: domain?.id ?? "",
    senderId: sender?.id ?? "",
    listId: (list.json as { list: { id: string } }).list.id,
    endpointId: (endpoint.json as { endpoint: { id: string } }).endpoint.id,
    formPublicId: form?.publicId ?? "",
  };
});
afterAll(async () => api?.close());

/** A valid request of each RPC, in the public JSON form (path parameters included, by JSON name). */
function knownValidRequest(method: DescMethod): Record<string, JsonValue> | undefined {
  const t = tenant;
  const seeds: Record<string, Record<string, JsonValue>> = {
    "mail.v1.MailService.SendMessage": { to: { email: "ok@customers.example", name: "Ok" }, subject: "Hi {{ name }}", html: "<p>Hi</p>", variables: { name: "x" }, tags: { k: "v" } },
    "mail.v1.MailService.GetMessage": { id: t.messageIds[0] ?? "" },
    "mail.v1.MailService.ListMessages": { limit: 2, recipient: "ok@customers.example" },
    "mail.v1.MailService.GetAccount": {},
    "mail.v1.MailService.ListContacts": { limit: 2 },
    "mail.v1.MailService.GetContact": { id: t.contactIds[0] ?? "" },
    "mail.v1.MailService.UpsertContact": { email: "prop@customers.example", firstName: "Prop", tags: ["a"], attributes: { plan: "pro" } },
    "mail.v1.MailService.ListForms": {},
    "mail.v1.MailService.RecordConversion": { eventId: "order-1", eventType: "purchase", email: "buyer@customers.example", revenue: "10.50", currency: "EUR" },
    "mail.v1.ListsService.CreateContactList": { name: "Prop list" },
    "mail.v1.ListsService.ListContactLists": {},
    "mail.v1.AuditService.ListAuditEvents": { limit: 10, action: "api_key.created" },
    "mail.v1.ListsService.RenameContactList": { id: t.listId, name: "Renamed" },
    "mail.v1.ListsService.DeleteContactList": { id: doomed.listId },
    "mail.v1.WebhooksService.CreateWebhookEndpoint": { url: `https://${PUBLIC_HOOK_HOST}/prop`, events: ["sent"], description: "prop" },
    "mail.v1.WebhooksService.ListWebhookEndpoints": {},
    "mail.v1.WebhooksService.GetWebhookEndpoint": { id: t.endpointId },
    "mail.v1.WebhooksService.UpdateWebhookEndpoint": { id: t.endpointId, description: "updated" },
    "mail.v1.WebhooksService.DeleteWebhookEndpoint": { id: doomed.endpointId },
    "mail.v1.WebhooksService.RotateWebhookSecret": { id: t.endpointId },
    "mail.v1.WebhooksService.ListWebhookDeliveries": { limit: 2 },
    "mail.v1.WebhooksService.GetWebhookDelivery": { id: t.deliveryIds[0] ?? "" },
    "mail.v1.WebhooksService.RetryWebhookDelivery": { id: t.deliveryIds[0] ?? "" },
    "mail.v1.WebhooksService.RetryWebhookDeadLetters": { id: t.endpointId, since: "2026-01-01T00:00:00Z" },
    // An unknown endpoint (404): a known one would make the service post to its public address on every run.
    "mail.v1.WebhooksService.SendTestWebhookEvent": { id: "00000000-0000-4000-8000-000000000000", event: "sent" },
    // No worker here, so no relay: a test event for the endpoints is recorded and never posted.
    "mail.v1.WebhooksService.TriggerWebhookEvent": { event: "sent" },
    "mail.v1.IntegrationsService.ConnectStore": { provider: "woocommerce", siteUrl: "https://shop.example.com" },
    "mail.v1.IntegrationsService.PushOrder": { integrationId: t.integrationId, order: { id: 7, status: "processing", currency: "EUR", total: "9.99", billing: { email: "buyer@customers.example" } } },
    "mail.v1.SignupFormsService.CreateForm": { name: "Prop form", fields: [{ name: "email", label: "Email", type: "email", required: true }], consentText: "Yes", language: "en" },
    "mail.v1.SignupFormsService.DeactivateForm": { publicId: doomed.formPublicId },
    "mail.v1.ReportsService.GetRevenueByCampaign": { since: "2026-01-01T00:00:00Z", until: "2026-12-31T00:00:00Z" },
    "mail.v1.ReportsService.ListContactConversions": { contactId: t.contactIds[0] ?? "", limit: 2 },
    "mail.v1.SignupFormsService.CountSignups": { since: "2026-01-01T00:00:00Z", until: "2026-12-31T00:00:00Z" },
    "mail.v1.TemplatesService.PutTemplate": { name: "prop-template", subject: "Hello {{ name }}", html: "<p>Hi {{ name }}</p>", text: "Hi" },
    "mail.v1.TemplatesService.ListTemplates": {},
    "mail.v1.TemplatesService.GetTemplate": { name: SEEDED_TEMPLATE },
    "mail.v1.TemplatesService.ListTemplateVersions": { templateId: SEEDED_TEMPLATE },
    "mail.v1.TemplatesService.PreviewTemplate": { templateId: SEEDED_TEMPLATE, variables: { name: "Ada" } },
    // Unknown templates (404): a restore would change the seeded one, a deletion remove it, and an API key is refused a test send (403).
    "mail.v1.TemplatesService.RestoreTemplateVersion": { templateId: "no-such-template", version: 1 },
    "mail.v1.TemplatesService.DeleteTemplate": { name: "no-such-template" },
    "mail.v1.TemplatesService.SendTestTemplate": { templateId: "no-such-template", variables: { name: "Ada" } },
    "mail.v1.StatsService.GetStats": { since: "2026-01-01T00:00:00Z", until: "2026-01-08T00:00:00Z", interval: "STATS_INTERVAL_DAY", tag: "plan" },
    "mail.v1.StatsService.GetStatsLeaders": { since: "2026-01-01T00:00:00Z", until: "2026-01-08T00:00:00Z" },
    "mail.v1.SuppressionsService.ListSuppressions": { limit: 2, q: "customers", reason: "bounce", since: "2026-01-01T00:00:00Z" },
    "mail.v1.SuppressionsService.GetSuppression": { email: t.contactEmails[0] ?? "" },
    "mail.v1.SuppressionsService.AddSuppression": { email: "prop-suppressed@customers.example" },
    "mail.v1.SuppressionsService.RemoveSuppression": { email: "prop-suppressed@customers.example", reason: "added by the property test" },
    "mail.v1.CreditsService.GetCredits": {},
    "mail.v1.CampaignsService.CreateCampaign": { name: "Prop", audience: { listIds: [t.listId], tag: "seed" }, content: { subject: "Hi {{ firstName }}", html: "<p>Hi</p>", text: "Hi" }, trackOpens: true },
    "mail.v1.CampaignsService.UpdateCampaign": { id: campaignId, name: "Prop 2", replyTo: "help@customers.example" },
    "mail.v1.CampaignsService.GetCampaign": { id: campaignId },
    "mail.v1.CampaignsService.ListCampaigns": { limit: 2, state: "draft" },
    "mail.v1.CampaignsService.PreviewCampaignAudience": { id: campaignId },
    // An unknown campaign (404): an API key is refused a test copy (403), and a schedule would start sending.
    "mail.v1.CampaignsService.SendCampaignTest": { id: "00000000-0000-4000-8000-000000000000" },
    "mail.v1.CampaignsService.ScheduleCampaign": { id: "00000000-0000-4000-8000-000000000000", sendAt: "2030-01-01T00:00:00Z" },
    "mail.v1.CampaignsService.PauseCampaign": { id: campaignId },
    "mail.v1.CampaignsService.ResumeCampaign": { id: campaignId },
    "mail.v1.CampaignsService.CancelCampaign": { id: campaignId },
    "mail.v1.CampaignsService.GetCampaignResults": { id: campaignId },
    "mail.v1.CreditsService.ListCreditLedger": { limit: 2, reason: "grant" },
    "mail.v1.SendingStatusService.GetSendingStatus": {},
    "mail.v1.DomainsService.CreateDomain": { domain: "prop-domain.example" },
    "mail.v1.DomainsService.ListDomains": {},
    "mail.v1.DomainsService.GetDomain": { id: t.domainId },
    // An unknown domain (404): a known one would look its records up in the machine's DNS on every run.
    "mail.v1.DomainsService.CheckDomain": { id: "00000000-0000-4000-8000-000000000000" },
    "mail.v1.DomainsService.DeleteDomain": { id: doomed.domainId },
    "mail.v1.SendersService.CreateSender": { email: `prop@${t.domainName}`, name: "Prop" },
    "mail.v1.SendersService.ListSenders": {},
    "mail.v1.SendersService.SetDefaultSender": { id: t.senderId },
    "mail.v1.SendersService.DeleteSender": { id: doomed.senderId },
  };
  return seeds[`${method.parent.typeName}.${method.name}`];
}

/** The valid request of an RPC; an RPC without one (new in the contract) is fuzzed from nothing, and named by the coverage test. */
function validRequest(method: DescMethod): Record<string, JsonValue> {
  return knownValidRequest(method) ?? {};
}

/** The ids a path may carry: the tenant's own, unknown ones, and hostile text. */
function pathValue(known: JsonValue | undefined): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(typeof known === "string" ? known : "") },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 3, arbitrary: hostileString.filter((s) => s !== "" && s.length < 500) },
  );
}

interface RestRequest {
  readonly verb: string;
  readonly path: string;
  readonly body: Record<string, JsonValue> | JsonValue | undefined;
  readonly sent: string[];
}

function toQuery(values: Record<string, JsonValue>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (Array.isArray(value)) for (const item of value) query.append(key, typeof item === "string" ? item : JSON.stringify(item));
    else query.append(key, typeof value === "string" ? value : JSON.stringify(value));
  }
  const text = query.toString();
  return text === "" ? "" : `?${text}`;
}

function restRequests(method: DescMethod, binding: HttpBinding): fc.Arbitrary<RestRequest> {
  const seed = validRequest(method);
  const pathJsonNames = binding.pathParams.map((name) => method.input.fields.find((f) => f.name === name)?.jsonName ?? name);
  const rest = Object.fromEntries(Object.entries(seed).filter(([key]) => !pathJsonNames.includes(key)));
  const bodyField = binding.body && binding.body !== "*" ? method.input.fields.find((f) => f.name === binding.body) : undefined;

  const pathValues = fc.tuple(...pathJsonNames.map((name) => pathValue(seed[name])));
  let payload: fc.Arbitrary<{ body: RestRequest["body"]; query: Record<string, JsonValue> }>;
  if (binding.body === "*") {
    payload = mutatedJson(method.input, rest, binding.pathParams).map((body) => ({ body, query: {} }));
  } else if (bodyField?.fieldKind === "message") {
    const seedBody = (rest[bodyField.jsonName] ?? {}) as Record<string, JsonValue>;
    payload = fc.oneof(
      { weight: 4, arbitrary: mutatedJson(bodyField.message, seedBody) },
      { weight: 1, arbitrary: fc.constantFrom<JsonValue>([], "order", 1, null) },
    ).map((body) => ({ body, query: {} }));
  } else {
    payload = mutatedJson(method.input, rest, binding.pathParams).map((query) => ({ body: undefined, query }));
  }
  return fc.tuple(pathValues, payload).map(([values, { body, query }]) => {
    let path = binding.pathTemplate;
    binding.pathParams.forEach((name, i) => {
      path = path.replace(`{${name}}`, encodeURIComponent(values[i] ?? ""));
    });
    const sent = [...keysOf(query), ...keysOf(body)];
    return { verb: binding.verb.toUpperCase(), path: path + toQuery(query), body: body ?? (binding.body ? {} : undefined), sent };
  });
}

/** Every object key at any depth: the names a caller wrote, which a 400 may quote. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value && typeof value === "object") return Object.entries(value).flatMap(([key, item]) => [key, ...keysOf(item)]);
  return [];
}

const everyOperation = KEY_SERVICES.flatMap((service) => operationsOf(service).map((op) => ({ service, op, name: `${service.typeName.replace("mail.v1.", "")}.${op.method.name}` })));
/** What the REST bridge serves: every RPC but the server streams (gRPC and Connect only). */
const operations = everyOperation.filter(({ op }) => op.method.methodKind === "unary");

describe("every request schema through the REST bridge", () => {
  it("covers every RPC an API key reaches, each from a valid request", () => {
    // A new RPC is fuzzed from nothing until it has a valid request above; this names it.
    expect(operations.filter(({ op }) => !knownValidRequest(op.method)).map(({ name }) => name)).toEqual([]);
    expect(operations.length).toBeGreaterThanOrEqual(25);
    expect(operations.filter(({ op }) => !op.http).map(({ name }) => name)).toEqual([]);
    expect(everyOperation.filter(({ op }) => !op.http).map(({ name }) => name)).toEqual(["WebhooksService.StreamEvents"]);
  });

  it.each(operations)("$name: no 5xx, no stack trace, every 400 names a field", async ({ op }) => {
    const binding = op.http as HttpBinding;
    await fc.assert(
      fc.asyncProperty(restRequests(op.method, binding), async (request) => {
        const text = request.body === undefined ? undefined : JSON.stringify(request.body);
        const answer = await api.rest(tenant, request.verb, request.path, text);
        // The JSON parser refuses prototype-poisoning keys anywhere in a body, naming the body.
        const names = fieldNamesOf(op.method.input, {
          door: "rest",
          sent: request.sent,
          wholeBody: /"(?:__proto__|prototype)"/.test(text ?? ""),
          // The request line counts against the 16 KiB head limit with the headers the client adds.
          oversizedHead: request.path.length > 15 * 1024,
        });
        const problems = restProblems(answer, names);
        if (!EXPECTED_STATUSES.has(answer.status)) problems.push(`unexpected status ${answer.status}: ${answer.text.slice(0, 200)}`);
        if (problems.length > 0) throw new Error(`${request.verb} ${request.path} ${JSON.stringify(request.body)?.slice(0, 400)}\n  -> ${problems.join("\n  -> ")}`);
      }),
      { numRuns: RUNS },
    );
  });

  /** Every JSON body with a top-level string field: where an unpaired surrogate or a NUL can be put. */
  const textTargets = operations.flatMap(({ name, op }) => {
    const binding = op.http as HttpBinding;
    const field = binding.body === "*" ? op.method.input.fields.find((f) => f.fieldKind === "scalar" && f.scalar === ScalarType.STRING && !binding.pathParams.includes(f.name)) : undefined;
    return field ? [{ name, op, binding, field }] : [];
  });

  it.each(textTargets)("$name: a string PostgreSQL cannot store as written (an unpaired surrogate, a NUL) is refused naming the field", async ({ op, binding, field }) => {
    const seed = validRequest(op.method);
    await fc.assert(
      fc.asyncProperty(fc.oneof(unpairedSurrogate, withNul), async (text) => {
        let path = binding.pathTemplate;
        for (const name of binding.pathParams) path = path.replace(`{${name}}`, encodeURIComponent(String(seed[name] ?? "")));
        const body = { ...Object.fromEntries(Object.entries(seed).filter(([k]) => !binding.pathParams.includes(k))), [field.jsonName]: text };
        const answer = await api.rest(tenant, binding.verb.toUpperCase(), path, body);
        expect(answer.status, answer.text).toBe(400);
        expect(restProblems(answer, fieldNamesOf(op.method.input, { door: "rest", sent: Object.keys(body) }))).toEqual([]);
        expect((answer.json as { error: { message: string } }).error.message).toContain(`${field.jsonName}: `);
      }),
      { numRuns: 6 },
    );
  });
});

describe("every request schema over gRPC", () => {
  it.each(operations)("$name: no INTERNAL or UNKNOWN, no stack trace, every INVALID_ARGUMENT names a field", async ({ service, op }) => {
    const client = api.grpc(service, tenant) as unknown as Record<string, (request: unknown) => Promise<unknown>>;
    const call = client[op.method.localName];
    if (!call) throw new Error(`no client method ${op.method.localName}`);
    // The valid request as a message initialiser: JSON names are the local names here, except free-form values.
    const seed = Object.fromEntries(
      Object.entries(validRequest(op.method)).filter(([key]) => {
        const field = op.method.input.fields.find((f) => f.jsonName === key);
        return field?.fieldKind === "scalar";
      }),
    );
    await fc.assert(
      fc.asyncProperty(protoInitOf(op.method.input, seed), async (request) => {
        const outcome = await outcomeOf(() => call.call(client, request));
        const problems = grpcProblems(outcome, fieldNamesOf(op.method.input, { door: "grpc", sent: keysOf(request) }));
        if (problems.length > 0) {
          const shown = JSON.stringify(request, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v instanceof Uint8Array ? `<${v.length} bytes>` : v));
          throw new Error(`${op.method.name} ${shown.slice(0, 500)}\n  -> ${problems.join("\n  -> ")}`);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
