import { create, type DescField, type DescMessage, type DescService, fromJson, getOption, type Message, ScalarType } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { timestampNow, ValueSchema } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiErrorFrom } from "../../src/contract/api-error.ts";
import { fieldRulesOf, maxLengthOf } from "../../src/contract/field-rules.ts";
import { operationSpec } from "../../src/contract/routes.ts";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { AuditService } from "../../src/gen/mail/v1/audit_pb.js";
import { SignupFormsService } from "../../src/gen/mail/v1/forms_pb.js";
import { field_behavior, FieldBehavior } from "../../src/gen/google/api/field_behavior_pb.js";
import { IntegrationsService } from "../../src/gen/mail/v1/integrations_pb.js";
import { CreateContactListRequestSchema, ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import { ListMessagesRequestSchema, MailService, SendMessageRequestSchema } from "../../src/gen/mail/v1/mail_pb.js";
import { MembersService } from "../../src/gen/mail/v1/members_pb.js";
import { MessageContentService } from "../../src/gen/mail/v1/message_content_pb.js";
import { operator_only } from "../../src/gen/mail/v1/options_pb.js";
import { ReportsService } from "../../src/gen/mail/v1/reports_pb.js";
import { SessionService } from "../../src/gen/mail/v1/sessions_pb.js";
import { TemplatesService } from "../../src/gen/mail/v1/templates_pb.js";
import { SuppressionsService } from "../../src/gen/mail/v1/suppressions_pb.js";
import { CreditsService } from "../../src/gen/mail/v1/credits_pb.js";
import { SendingStatusService } from "../../src/gen/mail/v1/sending_status_pb.js";
import { CampaignsService } from "../../src/gen/mail/v1/campaigns_pb.js";
import { DomainsService, SendersService } from "../../src/gen/mail/v1/domains_pb.js";
import { StatsService } from "../../src/gen/mail/v1/stats_pb.js";
import { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { contractRegistry } from "../../src/openapi/descriptor-set.ts";
import { ruleViolations } from "../../src/transport/connect/contract-validation-interceptor.ts";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";

/**
 * One validation from the contract on every door: the field rules declared
 * with protovalidate's `(buf.validate.field)` are enforced after
 * authentication on REST, Connect, gRPC (its direct unary path included)
 * and gRPC-Web, with one answer (400 VALIDATION_ERROR / INVALID_ARGUMENT
 * naming the field); Connect refuses unknown JSON keys in the REST bridge's
 * words.
 */

interface ErrorBody {
  error: { code: string; message: string };
}

/** Every company service of the public listener (the operator listener adds AdminService, EventsService and DeliveryReportsService). */
const PUBLIC_SERVICES: readonly DescService[] = [
  MailService,
  WebhooksService,
  ListsService,
  IntegrationsService,
  SignupFormsService,
  ReportsService,
  TemplatesService,
  MembersService,
  ApiKeysService,
  AuditService,
  MessageContentService,
  SessionService,
  SuppressionsService,
  CreditsService,
  SendingStatusService,
  CampaignsService,
  DomainsService,
  SendersService,
  StatsService,
];

let h: ApiHarness;
let companyId: string;
let secret: string;

beforeAll(async () => {
  h = await startApiHarness();
  ({ companyId, secret } = await h.newCompanyWithKey());
});
afterAll(async () => h?.close());

const withKey: Interceptor = (next) => (req) => {
  req.header.set("authorization", `Bearer ${secret}`);
  return next(req);
};

type Door = "connect" | "grpc" | "grpc-web";

function transportOf(door: Door, interceptors: Interceptor[] = [withKey]): Transport {
  switch (door) {
    case "connect":
      // Connect's JSON, the browser's and most Connect clients' format.
      return createConnectTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1", interceptors });
    case "grpc":
      // HTTP/2, one uncompressed protobuf message: the direct unary path.
      return createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors });
    case "grpc-web":
      return createGrpcWebTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1", interceptors });
  }
}

/** The contract error a call failed with: its gRPC code, the contract's code and the message. */
async function failureOf(call: Promise<unknown>): Promise<{ grpcCode: Code; code: string | undefined; message: string }> {
  const outcome = await call.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  if (!outcome) throw new Error("the call succeeded");
  return { grpcCode: outcome.code, code: apiErrorFrom(outcome)?.code, message: outcome.rawMessage };
}

/** The problems of a VALIDATION_ERROR message (`a: x; b: y`) by field. */
function problemsOf(message: string): Map<string, string> {
  return new Map(
    message.split("; ").map((problem) => {
      const colon = problem.indexOf(": ");
      return [problem.slice(0, colon), problem.slice(colon + 2)] as const;
    }),
  );
}

describe("a 5,000-character filter", () => {
  const actor = "a".repeat(5_000);
  const tag = "t".repeat(5_000);

  it("of the audit log answers 400 VALIDATION_ERROR naming `actor` over REST", async () => {
    const response = await h.fetch(`/mail/v1/audit-events?actor=${actor}`, { headers: { authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as ErrorBody;
    expect(error).toEqual({ code: "VALIDATION_ERROR", message: "actor: must be at most 254 characters" });
    // Refused after authentication: the answer carries the key's rate-limit headers.
    expect(response.headers.get("x-ratelimit-limit")).toBe("600");
  });

  it.each<Door>(["connect", "grpc", "grpc-web"])("of the audit log answers INVALID_ARGUMENT / VALIDATION_ERROR naming `actor` over %s", async (door) => {
    const audit = createClient(AuditService, transportOf(door));
    const failure = await failureOf(audit.listAuditEvents({ actor }));
    expect(failure).toEqual({ grpcCode: Code.InvalidArgument, code: "VALIDATION_ERROR", message: "actor: must be at most 254 characters" });
  });

  it("of the message log answers 400 naming `tag` over REST, and the same over Connect, gRPC and gRPC-Web", async () => {
    const response = await h.fetch(`/mail/v1/messages?tag=${tag}`, { headers: { authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error).toEqual({ code: "VALIDATION_ERROR", message: "tag: must be at most 40 characters" });
    for (const door of ["connect", "grpc", "grpc-web"] as const) {
      const failure = await failureOf(createClient(MailService, transportOf(door)).listMessages({ tag }));
      expect(failure, door).toEqual({ grpcCode: Code.InvalidArgument, code: "VALIDATION_ERROR", message: "tag: must be at most 40 characters" });
    }
  });

  it.each<Door>(["connect", "grpc", "grpc-web"])("without a key answers 401 over %s: authentication comes first", async (door) => {
    const failure = await failureOf(createClient(AuditService, transportOf(door, [])).listAuditEvents({ actor }));
    expect(failure.code).toBe("AUTHENTICATION_REQUIRED");
  });

  it("within the rules is answered: a filter at its limit, and no limit (the default page)", async () => {
    const atLimit = await h.fetch(`/mail/v1/audit-events?actor=${"a".repeat(254)}`, { headers: { authorization: `Bearer ${secret}` } });
    expect(atLimit.status).toBe(200);
    const mail = createClient(MailService, transportOf("grpc"));
    expect((await mail.listMessages({ tag: "t".repeat(40) })).items).toEqual([]);
    expect((await failureOf(mail.listMessages({ limit: 0 }))).message).toMatch(/^limit: /);
    expect((await failureOf(mail.listMessages({ limit: 101 }))).message).toMatch(/^limit: /);
  });
});

describe("the problems of the rules", () => {
  it("name each field by its JSON path, map keys and values apart, and a free-form value's part by its rule", () => {
    const send = fromJson(SendMessageRequestSchema, {
      to: { email: "someone@example.com", name: "n".repeat(121) },
      subject: "Hello",
      html: "<p>Hello</p>",
      tags: { ["k".repeat(41)]: "v", ok: "v".repeat(121) },
    });
    expect(ruleViolations(SendMessageRequestSchema, send)).toEqual([
      { field: "to.name", problem: "must be at most 120 characters" },
      { field: `tags.${"k".repeat(41)}`, problem: "key must be at most 40 characters" },
      { field: "tags.ok", problem: "value must be at most 120 characters" },
    ]);
    expect(ruleViolations(SendMessageRequestSchema, fromJson(SendMessageRequestSchema, { to: "someone@example.com", subject: "Hi" }))).toEqual([]);
    expect(ruleViolations(ListMessagesRequestSchema, create(ListMessagesRequestSchema, { limit: 0 }))).toEqual([
      { field: "limit", problem: "must be greater than or equal to 1 and less than or equal to 100" },
    ]);
    // Unset: the default page size.
    expect(ruleViolations(ListMessagesRequestSchema, create(ListMessagesRequestSchema, {}))).toEqual([]);
  });
});

// ---------------------------------------------------------------- every rule of the contract

/** Marked `(google.api.field_behavior) = REQUIRED`: the contract validation names it first when missing. */
function isRequired(field: DescField): boolean {
  return getOption(field, field_behavior).includes(FieldBehavior.REQUIRED);
}

/** A value for a REQUIRED field that gets past the contract's required check. */
function fillRequired(message: ReflectMessage): void {
  for (const field of message.desc.fields) {
    if (!isRequired(field)) continue;
    switch (field.fieldKind) {
      case "scalar":
        message.set(field, field.scalar === ScalarType.STRING ? "x" : field.scalar === ScalarType.INT64 ? 1n : 1);
        break;
      case "enum":
        message.set(field, field.enum.values[1]?.number ?? 0);
        break;
      case "list":
        if (field.listKind === "scalar") message.get(field).add("x");
        break;
      case "message": {
        const typeName = field.message.typeName;
        if (typeName === ValueSchema.typeName) {
          message.set(field, reflect(ValueSchema, create(ValueSchema, { kind: { case: "stringValue", value: "someone@example.com" } })));
        } else if (typeName === "google.protobuf.Timestamp") {
          message.set(field, reflect(field.message, timestampNow()));
        } else {
          const nested = reflect(field.message);
          fillRequired(nested);
          message.set(field, nested);
        }
        break;
      }
      default:
        break;
    }
  }
}

interface BoundedField {
  /** Fields from the request message down to the string, e.g. consent, source. */
  readonly fields: readonly DescField[];
  readonly max: number;
}

/** Every string with a `string.max_len` rule in `desc`, its singular nested messages included. */
function boundedStrings(desc: DescMessage, above: readonly DescField[] = [], seen = new Set<string>()): BoundedField[] {
  if (seen.has(desc.typeName) || desc.typeName.startsWith("google.protobuf.")) return [];
  const found: BoundedField[] = [];
  for (const field of desc.fields) {
    if (field.fieldKind === "scalar" && field.scalar === ScalarType.STRING) {
      const max = maxLengthOf(fieldRulesOf(field));
      if (max !== undefined) found.push({ fields: [...above, field], max });
    } else if (field.fieldKind === "message") {
      found.push(...boundedStrings(field.message, [...above, field], new Set([...seen, desc.typeName])));
    }
  }
  return found;
}

/** The request with its required fields filled and the bounded string one character too long. */
function requestTooLong(input: DescMessage, bounded: BoundedField): Message {
  const root = reflect(input);
  fillRequired(root);
  let message = root;
  for (const field of bounded.fields.slice(0, -1)) {
    if (field.fieldKind !== "message") throw new Error("a path through a non-message field");
    if (!message.isSet(field)) {
      const nested = reflect(field.message);
      fillRequired(nested);
      message.set(field, nested);
    }
    message = message.get(field);
  }
  const last = bounded.fields.at(-1) as DescField;
  message.set(last, "x".repeat(bounded.max + 1));
  return root.message;
}

describe("every string rule of the contract, on every RPC of the public listener's company services", () => {
  it("covers every company service the public listener serves", () => {
    const served = contractRegistry();
    const companyServices = [...served]
      .filter((type) => type.kind === "service" && type.typeName.startsWith("mail.v1.") && !getOption(type, operator_only))
      .map((service) => service.typeName)
      .sort();
    expect(PUBLIC_SERVICES.map((service) => service.typeName).sort()).toEqual(companyServices);
  });

  /**
   * Connect JSON, as the screen calls: an API key with every scope, or an
   * operator acting for the company (operator listener) for the services
   * that refuse API keys. Every RPC is reachable by one of the two; the
   * member-session RPCs (GetSession, SignOut) declare no string rule.
   */
  function clientFor(service: DescService): Client<DescService> {
    return refusesKeys(service) ? h.forCompany(service, companyId) : createClient(service, transportOf("connect"));
  }

  function refusesKeys(service: DescService): boolean {
    return service.methods.every((method) => {
      const access = operationSpec(method).access;
      return access.kind === "key" && !access.apiKeys;
    });
  }

  const cases = PUBLIC_SERVICES.flatMap((service) =>
    service.methods.flatMap((method) =>
      boundedStrings(method.input).map((bounded) => ({
        service,
        method,
        bounded,
        name: `${service.name}.${method.name} ${bounded.fields.map((f) => f.jsonName).join(".")} (at most ${bounded.max})`,
      })),
    ),
  );

  it("finds the rules (the contract declares a few dozen)", () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  it.each(cases)("$name: one character too long answers VALIDATION_ERROR naming the field", async ({ service, method, bounded }) => {
    const client = clientFor(service) as unknown as Record<string, (request: Message) => Promise<unknown>>;
    const call = client[method.localName];
    if (!call) throw new Error(`no client method ${method.localName}`);
    const failure = await failureOf(call(requestTooLong(method.input, bounded)));
    const path = bounded.fields.map((f) => f.jsonName).join(".");
    expect(failure.code, failure.message).toBe("VALIDATION_ERROR");
    expect(failure.grpcCode).toBe(Code.InvalidArgument);
    expect([...problemsOf(failure.message).keys()], failure.message).toContain(path);
  });
});

// ---------------------------------------------------------------- unknown JSON fields

describe("an unknown JSON field", () => {
  const connectPost = (path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${secret}` }) =>
    h.fetch(path, { method: "POST", headers: { ...headers, "content-type": "application/json", "connect-protocol-version": "1" }, body: JSON.stringify(body) });
  const restPost = (path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${secret}` }) =>
    h.fetch(path, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });

  it("answers the same 400 on REST and Connect, naming it by its path, after authentication", async () => {
    const cases = [
      { rest: "/mail/v1/lists", connect: "/mail.v1.ListsService/CreateContactList", body: { name: "Newsletter", colour: "red" }, message: "colour: is not a known field" },
      {
        rest: "/mail/v1/contacts",
        connect: "/mail.v1.MailService/UpsertContact",
        body: { email: "ada@example.com", consent: { source: "checkout", src: "web" } },
        message: "consent.src: is not a known field",
      },
    ];
    for (const { rest, connect, body, message } of cases) {
      const viaRest = await restPost(rest, body);
      const viaConnect = await connectPost(connect, body);
      expect(viaRest.status).toBe(400);
      expect(viaConnect.status).toBe(400);
      expect(((await viaRest.json()) as ErrorBody).error).toEqual({ code: "VALIDATION_ERROR", message });
      const connectError = (await viaConnect.json()) as { code: string; message: string };
      expect(connectError).toMatchObject({ code: "invalid_argument", message });
      // Both went through authentication and the rate limit.
      expect(viaRest.headers.get("x-ratelimit-limit")).toBe("600");
      expect(viaConnect.headers.get("x-ratelimit-limit")).toBe("600");
    }
    // Nothing was created.
    expect((await createClient(ListsService, transportOf("grpc")).listContactLists({})).items).toEqual([]);
  });

  it("without a key answers 401 on both: nothing about the body is said first", async () => {
    const body = { name: "Newsletter", colour: "red" };
    expect((await restPost("/mail/v1/lists", body, {})).status).toBe(401);
    const viaConnect = await connectPost("/mail.v1.ListsService/CreateContactList", body, {});
    expect(viaConnect.status).toBe(401);
    expect(((await viaConnect.json()) as { code: string }).code).toBe("unauthenticated");
  });

  it("an enum value Connect's JSON does not know is named too, not dropped", async () => {
    const response = await connectPost("/mail.v1.MailService/ListMessages", { status: "MESSAGE_STATUS_LOST" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toMatch(/^status: must be one of MESSAGE_STATUS_QUEUED, /);
  });

  it("of a binary protobuf message is accepted: protobuf's forward compatibility", async () => {
    const request = create(CreateContactListRequestSchema, { name: "From a newer client" });
    // Field 99, varint 1: a field this contract does not have.
    request.$unknown = [{ no: 99, wireType: 0, data: new Uint8Array([1]) }];
    const created = await createClient(ListsService, transportOf("grpc")).createContactList(request);
    expect(created.list?.name).toBe("From a newer client");
  });
});

// ---------------------------------------------------------------- what the spec states

describe("a send with a 501-character subject", () => {
  const send = { to: "someone@example.com", subject: "s".repeat(501), html: "<p>Hello</p>" };

  it("answers exactly as before: 400 VALIDATION_ERROR naming `subject`, nothing queued", async () => {
    const response = await h.fetch("/mail/v1/send", {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify(send),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { code: "VALIDATION_ERROR", message: "subject: must be at most 500 characters" } });
    const grpc = await failureOf(
      createClient(MailService, transportOf("grpc")).sendMessage({ ...send, to: { kind: { case: "stringValue", value: send.to } } }),
    );
    expect(grpc).toEqual({ grpcCode: Code.InvalidArgument, code: "VALIDATION_ERROR", message: "subject: must be at most 500 characters" });
    const log = await h.fetch("/mail/v1/messages", { headers: { authorization: `Bearer ${secret}` } });
    expect(((await log.json()) as { items: unknown[] }).items).toEqual([]);
  });

  it("with another bad field names both, as the send's own validation does", async () => {
    const response = await h.fetch("/mail/v1/send", {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ ...send, to: "not an address" }),
    });
    expect(response.status).toBe(400);
    const problems = problemsOf(((await response.json()) as ErrorBody).error.message);
    expect([...problems.keys()].sort()).toEqual(["subject", "to"]);
    expect(problems.get("subject")).toBe("must be at most 500 characters");
  });
});
