import { DomainsService, SendersService } from "../../src/gen/mail/v1/domains_pb.js";
import { Code, ConnectError } from "@connectrpc/connect";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTACT_CURSOR } from "../../src/capabilities/contacts/index.ts";
import { MESSAGE_LOG_CURSOR } from "../../src/capabilities/messages/read/index.ts";
import { createKeysetCursorCodec } from "../../src/capabilities/shared/keyset-cursor.ts";
import { DELIVERY_CURSOR } from "../../src/capabilities/webhooks/index.ts";
import { IntegrationsService } from "../../src/gen/mail/v1/integrations_pb.js";
import { SignupFormsService } from "../../src/gen/mail/v1/forms_pb.js";
import { ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import { ConversionEventType, MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { outcomeOf, restProblems } from "./support/answers.ts";
import { type HostileApi, KEY_SERVICES, type RestAnswer, startHostileApi } from "./support/hostile-api.ts";
import { type SeededTenant, seedTenant } from "./support/seed.ts";

/**
 * Where one company ends and another begins, probed from the outside:
 *
 * - cursor tampering on every paginated route (the message log, contacts,
 *   webhook deliveries): another company's cursor, any edit of one's own, a
 *   cursor reused with other filters, and even a correctly signed cursor
 *   pointing into another company's rows: a 400 naming `cursor`, or a page
 *   of one's own rows; never a row of the other company;
 * - id guessing on every route that takes an id (messages, contacts by id
 *   and by address, lists, webhook endpoints and deliveries, store
 *   integrations, templates, senders, sign-up forms, and the ids inside
 *   bodies and filters): another company's id answers exactly what an
 *   unknown id answers (404 NOT_FOUND, same message), over REST and gRPC,
 *   and changes nothing of theirs.
 */
let api: HostileApi;
let a: SeededTenant;
let b: SeededTenant;

beforeAll(async () => {
  api = await startHostileApi();
  [a, b] = await Promise.all([seedTenant(api, "Alpha"), seedTenant(api, "Beta")]);
});
afterAll(async () => api?.close());

/** Every id of `t`, to look for in answers given to the other company. */
function idsOf(t: SeededTenant): string[] {
  return [t.companyId, t.domainId, t.senderId, t.templateId, ...t.messageIds, ...t.contactIds, ...t.contactEmails, t.listId, t.endpointId, ...t.deliveryIds, t.integrationId, t.formPublicId];
}

function expectNoneOf(t: SeededTenant, text: string, context: string): void {
  for (const id of idsOf(t)) expect(text.includes(id), `${context}: the answer holds ${t.name}'s ${id}`).toBe(false);
}

// ------------------------------------------------------------------ cursors

interface PagedRoute {
  readonly name: string;
  readonly path: string;
  /** A filter that changes the fingerprint but still lists every seeded row of the company. */
  readonly otherFilter: string;
  readonly codec: (secret: string) => { encode(companyId: string, fingerprint: string, position: { createdAt: string; id: string }): string };
}

const PAGED: readonly PagedRoute[] = [
  { name: "GET /mail/v1/messages", path: "/mail/v1/messages", otherFilter: "tag=seed", codec: (secret) => createKeysetCursorCodec(secret, MESSAGE_LOG_CURSOR) },
  { name: "GET /mail/v1/contacts", path: "/mail/v1/contacts", otherFilter: "tag=seed", codec: (secret) => createKeysetCursorCodec(secret, CONTACT_CURSOR) },
  { name: "GET /mail/v1/webhooks/deliveries", path: "/mail/v1/webhooks/deliveries", otherFilter: "event=contact.updated", codec: (secret) => createKeysetCursorCodec(secret, DELIVERY_CURSOR) },
];

async function firstPage(t: SeededTenant, route: PagedRoute, query = ""): Promise<{ items: { id: string }[]; nextCursor: string }> {
  const answer = await api.rest(t, "GET", `${route.path}?limit=1${query ? `&${query}` : ""}`);
  expect(answer.status, answer.text).toBe(200);
  const page = answer.json as { items: { id: string }[]; nextCursor: string | null };
  expect(page.nextCursor, `${route.name}: the seeded rows make more than one page`).toBeTypeOf("string");
  return { items: page.items, nextCursor: page.nextCursor as string };
}

function expectCursorRefused(answer: RestAnswer, context: string): void {
  expect(answer.status, `${context}: ${answer.text.slice(0, 200)}`).toBe(400);
  expect(restProblems(answer, { fields: new Set(["cursor"]), sent: new Set(), wholeBody: false }), context).toEqual([]);
  expect((answer.json as { error: { message: string } }).error.message.startsWith("cursor: "), context).toBe(true);
}

/** The position inside a cursor (the payload is plain JSON before its 32-byte MAC). */
function payloadOf(cursor: string): { c: string; f: string; t: string; i: string } {
  const raw = Buffer.from(cursor, "base64url");
  return JSON.parse(raw.subarray(0, raw.length - 32).toString("utf8")) as { c: string; f: string; t: string; i: string };
}

describe.each(PAGED)("cursor tampering: $name", (route) => {
  it("another company's cursor is a 400 naming cursor, with none of its rows", async () => {
    const theirs = await firstPage(b, route);
    const answer = await api.rest(a, "GET", `${route.path}?limit=5&cursor=${encodeURIComponent(theirs.nextCursor)}`);
    expectCursorRefused(answer, `${route.name} with ${b.name}'s cursor`);
    expectNoneOf(b, answer.text, route.name);
  });

  it("any edit of one's own cursor is a 400 naming cursor", async () => {
    const mine = await firstPage(a, route);
    const cursor = mine.nextCursor;
    const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const edits = fc.oneof(
      // One character changed anywhere (payload or MAC).
      fc.tuple(fc.nat({ max: cursor.length - 1 }), fc.constantFrom(...ALPHABET)).map(([i, c]) => cursor.slice(0, i) + c + cursor.slice(i + 1)),
      // Cut short, or lengthened.
      fc.nat({ max: cursor.length - 1 }).map((n) => cursor.slice(0, n)),
      fc.string({ minLength: 1, maxLength: 8 }).map((s) => cursor + s),
      // Other spellings of the same bytes, and other encodings.
      fc.constantFrom(
        Buffer.from(cursor, "base64url").toString("base64"),
        `${cursor}=`,
        cursor.toUpperCase(),
        encodeURIComponent(cursor).replace(/%/g, "%25"),
        ` ${cursor}`,
        cursor.repeat(3),
        "x".repeat(10_000),
        "",
        "null",
        "%00",
      ),
    ).filter((edited) => edited !== cursor && edited !== "");
    await fc.assert(
      fc.asyncProperty(edits, async (edited) => {
        const answer = await api.rest(a, "GET", `${route.path}?limit=5&cursor=${encodeURIComponent(edited)}`);
        expectCursorRefused(answer, `${route.name} with ${JSON.stringify(edited.slice(0, 80))}`);
      }),
      { numRuns: Number(process.env.HOSTILE_RUNS ?? 20) },
    );
  });

  it("a cursor reused with other filters is a 400 naming cursor", async () => {
    const mine = await firstPage(a, route);
    const answer = await api.rest(a, "GET", `${route.path}?limit=5&${route.otherFilter}&cursor=${encodeURIComponent(mine.nextCursor)}`);
    expectCursorRefused(answer, `${route.name} with other filters`);
  });

  it("a correctly signed cursor pointing into another company's rows still lists only one's own rows", async () => {
    const mine = await firstPage(a, route);
    const theirs = await firstPage(b, route);
    const own = payloadOf(mine.nextCursor);
    const into = payloadOf(theirs.nextCursor);
    // What an attacker who stole the cursor secret could make: our company, our filters, their position.
    const forged = route.codec(api.h.app.config.cursorSecret).encode(a.companyId, own.f, { createdAt: into.t, id: into.i });
    const answer = await api.rest(a, "GET", `${route.path}?limit=100&cursor=${encodeURIComponent(forged)}`);
    expect(answer.status, answer.text).toBe(200);
    expectNoneOf(b, answer.text, `${route.name} with a forged cursor`);
    // The same secret and payload shape as the service's own: the cursor was accepted, not refused.
    expect(payloadOf(forged).c).toBe(a.companyId);
  });
});

describe("cursor tampering over gRPC", () => {
  it("another company's cursor is INVALID_ARGUMENT naming cursor, on every paginated RPC", async () => {
    const mail = api.grpc(MailService, a);
    const hooks = api.grpc(WebhooksService, a);
    const messages = await firstPage(b, PAGED[0] as PagedRoute);
    const contacts = await firstPage(b, PAGED[1] as PagedRoute);
    const deliveries = await firstPage(b, PAGED[2] as PagedRoute);
    const calls: [string, () => Promise<unknown>][] = [
      ["ListMessages", () => mail.listMessages({ limit: 5, cursor: messages.nextCursor })],
      ["ListContacts", () => mail.listContacts({ limit: 5, cursor: contacts.nextCursor })],
      ["ListWebhookDeliveries", () => hooks.listWebhookDeliveries({ limit: 5, cursor: deliveries.nextCursor })],
    ];
    for (const [name, call] of calls) {
      const outcome = await outcomeOf(call);
      expect(outcome, name).toBeInstanceOf(ConnectError);
      expect((outcome as ConnectError).code, name).toBe(Code.InvalidArgument);
      expect((outcome as ConnectError).rawMessage, name).toMatch(/^cursor: /);
    }
  });
});

// ------------------------------------------------------------------ ids

interface IdProbe {
  readonly name: string;
  readonly method: string;
  /** Path and body for an id; the body may carry the id instead of the path. */
  readonly request: (id: string) => { path: string; body?: unknown };
  /** One of `b`'s ids of the right kind (read after seeding). */
  readonly foreign: () => string;
  /** A well-formed id that names nothing. */
  readonly unknown: () => string;
}

const UNKNOWN_UUID = "2b1c4a3e-9d8f-4e7a-b6c5-d4e3f2a1b0c9";
const orderBody = { id: 99, status: "processing", currency: "EUR", total: "1.00" };

const ID_PROBES: readonly IdProbe[] = [
  { name: "GET /mail/v1/messages/{id}", method: "GET", request: (id) => ({ path: `/mail/v1/messages/${encodeURIComponent(id)}` }), foreign: () => b.messageIds[0] ?? "", unknown: () => UNKNOWN_UUID },
  { name: "GET /mail/v1/contacts/{id} (id)", method: "GET", request: (id) => ({ path: `/mail/v1/contacts/${encodeURIComponent(id)}` }), foreign: () => b.contactIds[0] ?? "", unknown: () => UNKNOWN_UUID },
  {
    name: "GET /mail/v1/contacts/{id} (address)",
    method: "GET",
    request: (email) => ({ path: `/mail/v1/contacts/${encodeURIComponent(email)}` }),
    foreign: () => b.contactEmails[0] ?? "",
    unknown: () => "nobody-at-all@customers.example",
  },
  { name: "GET /mail/v1/contacts?listId=", method: "GET", request: (id) => ({ path: `/mail/v1/contacts?listId=${encodeURIComponent(id)}` }), foreign: () => b.listId, unknown: () => UNKNOWN_UUID },
  { name: "POST /mail/v1/contacts (listIds)", method: "POST", request: (id) => ({ path: "/mail/v1/contacts", body: { email: "joiner@customers.example", listIds: [id] } }), foreign: () => b.listId, unknown: () => UNKNOWN_UUID },
  {
    name: "POST /mail/v1/conversions (contactId)",
    method: "POST",
    request: (id) => ({ path: "/mail/v1/conversions", body: { eventId: `guess-${id}`, eventType: "purchase", contactId: id, revenue: "1.00" } }),
    foreign: () => b.contactIds[0] ?? "",
    unknown: () => UNKNOWN_UUID,
  },
  { name: "POST /mail/v1/send (templateId)", method: "POST", request: (id) => ({ path: "/mail/v1/send", body: { to: "t@customers.example", templateId: id, variables: { name: "x" } } }), foreign: () => b.templateId, unknown: () => UNKNOWN_UUID },
  { name: "POST /mail/v1/send (senderId)", method: "POST", request: (id) => ({ path: "/mail/v1/send", body: { to: "t@customers.example", subject: "s", html: "h", senderId: id } }), foreign: () => b.senderId, unknown: () => UNKNOWN_UUID },
  { name: "PATCH /mail/v1/lists/{id}", method: "PATCH", request: (id) => ({ path: `/mail/v1/lists/${encodeURIComponent(id)}`, body: { name: "taken over" } }), foreign: () => b.listId, unknown: () => UNKNOWN_UUID },
  { name: "DELETE /mail/v1/lists/{id}", method: "DELETE", request: (id) => ({ path: `/mail/v1/lists/${encodeURIComponent(id)}` }), foreign: () => b.listId, unknown: () => UNKNOWN_UUID },
  { name: "GET /mail/v1/webhooks/{id}", method: "GET", request: (id) => ({ path: `/mail/v1/webhooks/${encodeURIComponent(id)}` }), foreign: () => b.endpointId, unknown: () => UNKNOWN_UUID },
  { name: "PATCH /mail/v1/webhooks/{id}", method: "PATCH", request: (id) => ({ path: `/mail/v1/webhooks/${encodeURIComponent(id)}`, body: { description: "taken over" } }), foreign: () => b.endpointId, unknown: () => UNKNOWN_UUID },
  { name: "DELETE /mail/v1/webhooks/{id}", method: "DELETE", request: (id) => ({ path: `/mail/v1/webhooks/${encodeURIComponent(id)}` }), foreign: () => b.endpointId, unknown: () => UNKNOWN_UUID },
  { name: "POST /mail/v1/webhooks/{id}/rotate-secret", method: "POST", request: (id) => ({ path: `/mail/v1/webhooks/${encodeURIComponent(id)}/rotate-secret`, body: {} }), foreign: () => b.endpointId, unknown: () => UNKNOWN_UUID },
  {
    name: "POST /mail/v1/webhooks/{id}/retry-dead-letters",
    method: "POST",
    request: (id) => ({ path: `/mail/v1/webhooks/${encodeURIComponent(id)}/retry-dead-letters`, body: { since: "2020-01-01T00:00:00Z" } }),
    foreign: () => b.endpointId,
    unknown: () => UNKNOWN_UUID,
  },
  { name: "GET /mail/v1/webhooks/deliveries/{id}", method: "GET", request: (id) => ({ path: `/mail/v1/webhooks/deliveries/${encodeURIComponent(id)}` }), foreign: () => b.deliveryIds[0] ?? "", unknown: () => UNKNOWN_UUID },
  { name: "POST /mail/v1/webhooks/deliveries/{id}/retry", method: "POST", request: (id) => ({ path: `/mail/v1/webhooks/deliveries/${encodeURIComponent(id)}/retry`, body: {} }), foreign: () => b.deliveryIds[0] ?? "", unknown: () => UNKNOWN_UUID },
  {
    name: "POST /mail/v1/forms/{publicId}/deactivate",
    method: "POST",
    request: (id) => ({ path: `/mail/v1/forms/${encodeURIComponent(id)}/deactivate`, body: {} }),
    foreign: () => b.formPublicId,
    unknown: () => "AbCdEfGhIjKlMnOp",
  },
  { name: "POST /mail/v1/integrations/{id}/orders", method: "POST", request: (id) => ({ path: `/mail/v1/integrations/${encodeURIComponent(id)}/orders`, body: orderBody }), foreign: () => b.integrationId, unknown: () => UNKNOWN_UUID },
];

/** The answer with `id` written as `<id>`, so that answers about two ids compare. */
function withoutId(answer: RestAnswer, id: string): string {
  return answer.text.split(id).join("<id>").split(encodeURIComponent(id)).join("<id>");
}

describe("cross-tenant id guessing over REST", () => {
  it.each(ID_PROBES)("$name: another company's id answers exactly like an unknown one (404)", async (probe) => {
    const foreignId = probe.foreign();
    expect(foreignId).not.toBe("");
    const unknown = probe.request(probe.unknown());
    const guessed = probe.request(foreignId);
    const unknownAnswer = await api.rest(a, probe.method, unknown.path, unknown.body);
    const guessedAnswer = await api.rest(a, probe.method, guessed.path, guessed.body);
    expect(unknownAnswer.status, unknownAnswer.text).toBe(404);
    expect(guessedAnswer.status, guessedAnswer.text).toBe(404);
    expect((guessedAnswer.json as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    expect(withoutId(guessedAnswer, foreignId)).toBe(withoutId(unknownAnswer, probe.unknown()));
    expect(restProblems(guessedAnswer, { fields: new Set(), sent: new Set(), wholeBody: false })).toEqual([]);
    expectNoneOf(b, withoutId(guessedAnswer, foreignId), probe.name);
  });

  it("the deliveries filter by another company's endpoint shows none of its deliveries", async () => {
    const answer = await api.rest(a, "GET", `/mail/v1/webhooks/deliveries?endpointId=${b.endpointId}&limit=100`);
    expect([200, 404]).toContain(answer.status);
    expectNoneOf(b, answer.text.replace(b.endpointId, "<endpoint>"), "deliveries filtered by a foreign endpoint");
  });

  it("listings never show another company's rows", async () => {
    for (const path of ["/mail/v1/messages?limit=100", "/mail/v1/contacts?limit=100", "/mail/v1/lists", "/mail/v1/webhooks", "/mail/v1/webhooks/deliveries?limit=100", "/mail/v1/forms", "/mail/v1/me"]) {
      const answer = await api.rest(a, "GET", path);
      expect(answer.status, path).toBe(200);
      expectNoneOf(b, answer.text, path);
    }
  });

  it("nothing of the other company changed: its list, endpoint (and secret) and deliveries are as they were", async () => {
    const list = await api.rest(b, "GET", "/mail/v1/lists");
    expect((list.json as { items: { id: string; name: string }[] }).items.find((l) => l.id === b.listId)?.name).not.toBe("taken over");
    const endpoint = await api.rest(b, "GET", `/mail/v1/webhooks/${b.endpointId}`);
    expect(endpoint.status).toBe(200);
    // The route answers the endpoint itself (response_body), not wrapped.
    const shown = endpoint.json as { description: string | null; previousSecretExpiresAt: string | null };
    expect(shown.description).not.toBe("taken over");
    // A rotation would have left a previous secret signing for 24 hours.
    expect(shown.previousSecretExpiresAt).toBeNull();
    const delivery = await api.rest(b, "GET", `/mail/v1/webhooks/deliveries/${b.deliveryIds[0]}`);
    expect(delivery.status).toBe(200);
    const joiner = await api.rest(b, "GET", `/mail/v1/contacts?listId=${b.listId}&limit=100`);
    expect(joiner.text).not.toContain("joiner@customers.example");
  });
});

describe("cross-tenant id guessing over gRPC", () => {
  it("every RPC taking an id answers NOT_FOUND with the unknown id's message", async () => {
    const mail = api.grpc(MailService, a);
    const lists = api.grpc(ListsService, a);
    const hooks = api.grpc(WebhooksService, a);
    const stores = api.grpc(IntegrationsService, a);
    const forms = api.grpc(SignupFormsService, a);
    const probes: [string, (id: string) => Promise<unknown>, string][] = [
      ["GetMessage", (id) => mail.getMessage({ id }), b.messageIds[0] ?? ""],
      ["GetContact", (id) => mail.getContact({ id }), b.contactIds[0] ?? ""],
      ["GetContact by address", (id) => mail.getContact({ id }), b.contactEmails[0] ?? ""],
      ["ListContacts listId", (id) => mail.listContacts({ listId: id }), b.listId],
      ["UpsertContact listIds", (id) => mail.upsertContact({ email: "joiner@customers.example", listIds: { values: [{ kind: { case: "stringValue", value: id } }] } }), b.listId],
      ["RecordConversion contactId", (id) => mail.recordConversion({ eventId: `grpc-${id}`, eventType: ConversionEventType.PURCHASE, contactId: id }), b.contactIds[0] ?? ""],
      ["SendMessage templateId", (id) => mail.sendMessage({ to: { kind: { case: "stringValue", value: "t@customers.example" } }, templateId: id }), b.templateId],
      ["SendMessage senderId", (id) => mail.sendMessage({ to: { kind: { case: "stringValue", value: "t@customers.example" } }, subject: "s", html: "h", senderId: id }), b.senderId],
      ["RenameContactList", (id) => lists.renameContactList({ id, name: "taken over" }), b.listId],
      ["DeleteContactList", (id) => lists.deleteContactList({ id }), b.listId],
      ["GetWebhookEndpoint", (id) => hooks.getWebhookEndpoint({ id }), b.endpointId],
      ["UpdateWebhookEndpoint", (id) => hooks.updateWebhookEndpoint({ id, description: "taken over" }), b.endpointId],
      ["DeleteWebhookEndpoint", (id) => hooks.deleteWebhookEndpoint({ id }), b.endpointId],
      ["RotateWebhookSecret", (id) => hooks.rotateWebhookSecret({ id }), b.endpointId],
      ["RetryWebhookDeadLetters", (id) => hooks.retryWebhookDeadLetters({ id, since: { seconds: 1_577_836_800n, nanos: 0 } }), b.endpointId],
      ["GetWebhookDelivery", (id) => hooks.getWebhookDelivery({ id }), b.deliveryIds[0] ?? ""],
      ["RetryWebhookDelivery", (id) => hooks.retryWebhookDelivery({ id }), b.deliveryIds[0] ?? ""],
      ["DeactivateForm", (id) => forms.deactivateForm({ publicId: id }), b.formPublicId],
      ["PushOrder", (id) => stores.pushOrder({ integrationId: id, order: { id: 99n, status: "processing", currency: "EUR", total: "1.00" } }), b.integrationId],
    ];
    for (const [name, call, foreignId] of probes) {
      const unknownId = foreignId.includes("@") ? "nobody-at-all@customers.example" : foreignId === b.formPublicId ? "AbCdEfGhIjKlMnOp" : UNKNOWN_UUID;
      const unknown = await outcomeOf(() => call(unknownId));
      const guessed = await outcomeOf(() => call(foreignId));
      expect(unknown, name).toBeInstanceOf(ConnectError);
      expect(guessed, name).toBeInstanceOf(ConnectError);
      expect((guessed as ConnectError).code, name).toBe(Code.NotFound);
      expect((guessed as ConnectError).rawMessage.split(foreignId).join("<id>"), name).toBe((unknown as ConnectError).rawMessage.split(unknownId).join("<id>"));
    }
  });

  it("an operator acting for one company (AdminService, and the company services with x-mail-company-id), given another's ids, answers NOT_FOUND too", async () => {
    const admin = api.h.admin;
    const hooksOfA = api.h.forCompany(WebhooksService, a.companyId);
    const formsOfA = api.h.forCompany(SignupFormsService, a.companyId);
    const domainsOfA = api.h.forCompany(DomainsService, a.companyId);
    const sendersOfA = api.h.forCompany(SendersService, a.companyId);
    const calls: [string, () => Promise<unknown>][] = [
      ["GetWebhookEndpoint", () => hooksOfA.getWebhookEndpoint({ id: b.endpointId })],
      ["UpdateWebhookEndpoint", () => hooksOfA.updateWebhookEndpoint({ id: b.endpointId, description: "taken over" })],
      ["RotateWebhookSecret", () => hooksOfA.rotateWebhookSecret({ id: b.endpointId })],
      ["GetWebhookDelivery", () => hooksOfA.getWebhookDelivery({ id: b.deliveryIds[0] ?? "" })],
      ["RetryWebhookDelivery", () => hooksOfA.retryWebhookDelivery({ id: b.deliveryIds[0] ?? "" })],
      ["OverrideDomainVerification", () => admin.overrideDomainVerification({ companyId: a.companyId, domainId: b.domainId })],
      ["CheckDomain", () => domainsOfA.checkDomain({ id: b.domainId })],
      ["DeleteDomain", () => domainsOfA.deleteDomain({ id: b.domainId })],
      ["SetDefaultSender", () => sendersOfA.setDefaultSender({ id: b.senderId })],
      ["DeleteSender", () => sendersOfA.deleteSender({ id: b.senderId })],
      ["DeactivateForm", () => formsOfA.deactivateForm({ publicId: b.formPublicId })],
      ["DeleteWebhookEndpoint", () => hooksOfA.deleteWebhookEndpoint({ id: b.endpointId })],
    ];
    for (const [name, call] of calls) {
      const outcome = await outcomeOf(call);
      expect(outcome, name).toBeInstanceOf(ConnectError);
      expect((outcome as ConnectError).code, `${name}: ${(outcome as ConnectError).rawMessage}`).toBe(Code.NotFound);
    }
    // B's form is still served (no one deactivated it), and B's endpoint still exists.
    expect((await api.h.fetch(`/mail/v1/forms/${b.formPublicId}`)).status).toBe(200);
    expect((await api.rest(b, "GET", `/mail/v1/webhooks/${b.endpointId}`)).status).toBe(200);
  });
});

/** Every field name of every request an API key can make: what a 400 of a guessed request may name. */
const ANY_FIELD = new Set(KEY_SERVICES.flatMap((service) => service.methods.flatMap((method) => method.input.fields.map((f) => f.jsonName))));

describe("id guessing with any text", () => {
  it("random ids on every id route: never 5xx, never another company's data", async () => {
    const ids = fc.oneof(
      fc.uuid(),
      fc.constantFrom(...idsOf(b)),
      fc.string({ minLength: 1, maxLength: 60 }),
      fc.constantFrom("%", "..", "*", "' or 1=1 --", (b.messageIds[0] ?? "").toUpperCase(), ` ${b.listId}`, `${b.listId}\u0000`, (b.contactEmails[0] ?? "").toUpperCase()),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ID_PROBES), ids, async (probe, id) => {
        const { path, body } = probe.request(id);
        const answer = await api.rest(a, probe.method, path, body);
        expect(answer.status, `${probe.name} ${id}: ${answer.text.slice(0, 200)}`).toBeLessThan(500);
        expect(restProblems(answer, { fields: ANY_FIELD, sent: new Set(), wholeBody: false }), `${probe.name} ${id}`).toEqual([]);
        // The guessed id itself may be echoed back (as written or normalised); nothing else of theirs may appear.
        const echoed = [id, JSON.stringify(id).slice(1, -1), id.trim()]
          .filter((form) => form !== "")
          .reduce((text, form) => text.replace(new RegExp(form.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi"), "<id>"), answer.text);
        expectNoneOf(b, echoed, `${probe.name} ${id}`);
      }),
      { numRuns: Number(process.env.HOSTILE_RUNS ?? 20) * 2 },
    );
  });
});
