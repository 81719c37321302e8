import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createFileRegistry, fromBinary, getOption } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as ClientPackage from "../../clients/typescript/src/index.ts";
import { operator_only, refuse_api_keys, required_scope } from "../../clients/typescript/src/gen/mail/v1/options_pb.ts";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";

/**
 * The TypeScript client (clients/typescript) as a user gets it: built with
 * its own tsc configuration into dist/, imported from there, and used
 * against the real service (API process, worker, Temporal, PostgreSQL).
 */

const root = path.resolve(import.meta.dirname, "../..");
/** A small budget per key, so a test can spend it and meet a real 429. */
const REQUESTS_PER_MINUTE = 30;

let client: typeof ClientPackage;
let h: SendingHarness;

interface Recorded {
  readonly mail: ClientPackage.MailClient;
  /** Each request on the wire: its procedure and idempotency key. */
  readonly calls: Array<{ procedure: string; idempotencyKey: string | null }>;
  /** Each retry the client decided on. */
  readonly retries: ClientPackage.RetryEvent[];
}

/** A client with the default retries whose fetch notes every request, and which notes every retry. */
function recordedClient(apiKey: string): Recorded {
  const calls: Recorded["calls"] = [];
  const retries: ClientPackage.RetryEvent[] = [];
  const mail = client.createMailClient({
    apiKey,
    baseUrl: h.app.httpUrl,
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      calls.push({ procedure: url.pathname.slice(1), idempotencyKey: new Headers(init?.headers).get("idempotency-key") });
      return fetch(input, init);
    },
    retry: { onRetry: (event) => retries.push(event) },
  });
  return { mail, calls, retries };
}

/** The budget is a fixed one-minute window; spend it clear of the turn of a minute, or the count resets under the test. */
async function awayFromMinuteBoundary(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
}

beforeAll(async () => {
  const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
  const build = spawnSync(process.execPath, [tsc, "-p", "clients/typescript"], { cwd: root, encoding: "utf8" });
  expect(build.status, `tsc -p clients/typescript:\n${build.stdout}${build.stderr}`).toBe(0);
  client = (await import(pathToFileURL(path.join(root, "clients/typescript/dist/index.js")).href)) as typeof ClientPackage;
  h = await startSendingHarness({ requestsPerMinute: REQUESTS_PER_MINUTE });
});
afterAll(async () => h?.close());

describe("the TypeScript client against the service", () => {
  it("sends a message and reads it back", async () => {
    const sender = await h.readySender();
    const mail = client.createMailClient({ apiKey: sender.secret, baseUrl: h.app.httpUrl });

    const sent = await mail.mail.sendMessage({
      to: client.recipient("ada@example.com", "Ada Lovelace"),
      subject: "Your receipt",
      html: "<p>Thanks for your order.</p>",
      tags: { order: "1001" },
    });
    expect(sent.status).toBe(client.MessageStatus.QUEUED);
    expect(sent.replayed).toBe(false);

    // Handed to the email service (the simulator), which may already have reported the delivery.
    const handedOver: ClientPackage.MessageStatus[] = [client.MessageStatus.SENT, client.MessageStatus.DELIVERED];
    let read = await mail.mail.getMessage({ id: sent.id });
    for (let i = 0; i < 20 && !handedOver.includes(read.message?.status ?? client.MessageStatus.UNSPECIFIED); i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      read = await mail.mail.getMessage({ id: sent.id });
    }
    expect(read.message).toMatchObject({ id: sent.id, recipient: "ada@example.com", subject: "Your receipt", tags: { order: "1001" } });
    expect(handedOver).toContain(read.message?.status);
  });

  it("after a 429 waits retry-after and sends once, with the same generated idempotency key on both attempts", { timeout: 150_000 }, async () => {
    const sender = await h.readySender();
    const { mail, calls, retries } = recordedClient(sender.secret);
    const once = client.createMailClient({ apiKey: sender.secret, baseUrl: h.app.httpUrl, retry: false });

    await awayFromMinuteBoundary();
    // Spend the key's budget: without retries the 429 comes back as it is.
    let refused: ClientPackage.MailApiError | undefined;
    for (let i = 0; i <= REQUESTS_PER_MINUTE && !refused; i++) {
      await once.mail.getAccount({}).catch((error: unknown) => {
        refused = error as ClientPackage.MailApiError;
      });
    }
    expect(refused).toBeInstanceOf(client.MailApiError);
    expect(refused).toMatchObject({ code: "RATE_LIMITED", status: 429, attempts: 1 });
    expect(refused?.retryAfterSeconds).toBeGreaterThan(0);

    const sent = await mail.mail.sendMessage({ to: client.recipient("grace@example.com"), subject: "Retried", html: "<p>Once.</p>" });

    expect(retries).toHaveLength(1);
    const [retry] = retries;
    expect(retry?.procedure).toBe("mail.v1.MailService/SendMessage");
    expect(retry?.error).toBeInstanceOf(client.MailApiError);
    expect(retry?.error).toMatchObject({ code: "RATE_LIMITED", status: 429 });
    expect(retry?.error.requestId).toBeTruthy();
    // The wait is the service's retry-after, not a guess.
    expect(retry?.delayMs).toBe((retry?.error.retryAfterSeconds ?? 0) * 1000);

    const sends = calls.filter((c) => c.procedure === "mail.v1.MailService/SendMessage");
    expect(sends).toHaveLength(2);
    expect(sends[0]?.idempotencyKey).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(sends[1]?.idempotencyKey).toBe(sends[0]?.idempotencyKey);
    expect(retry?.idempotencyKey).toBe(sends[0]?.idempotencyKey);

    const log = await h.forCompany(MailService, sender.companyId).listMessages({});
    expect(log.items.map((m) => m.id)).toEqual([sent.id]);
  });

  it("answers a send repeated with the caller's idempotency key with the same message and replayed: true", async () => {
    const sender = await h.readySender();
    const mail = client.createMailClient({ apiKey: sender.secret, baseUrl: h.app.httpUrl });
    const request = {
      to: client.recipient("linus@example.com"),
      subject: "Order 1002",
      html: "<p>Shipped.</p>",
      idempotencyKey: "order-1002-shipped",
    };

    const first = await mail.mail.sendMessage(request);
    const again = await mail.mail.sendMessage(request);

    expect(first.replayed).toBe(false);
    expect(again.replayed).toBe(true);
    expect(again.id).toBe(first.id);
    const log = await h.forCompany(MailService, sender.companyId).listMessages({});
    expect(log.items.map((m) => m.id)).toEqual([first.id]);
  });

  it("throws MailApiError with the API's code for a 400, and does not retry it", async () => {
    const sender = await h.readySender();
    const { mail, calls, retries } = recordedClient(sender.secret);

    const error = await mail.mail
      .sendMessage({ to: client.recipient("ada@example.com"), subject: "x".repeat(501), html: "<p>Hi</p>" })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(client.MailApiError);
    const apiError = error as ClientPackage.MailApiError;
    expect(apiError.code).toBe("VALIDATION_ERROR");
    expect(apiError.status).toBe(400);
    expect(apiError.message).toContain("subject");
    expect(apiError.requestId).toBeTruthy();
    expect(apiError.attempts).toBe(1);
    expect(apiError.retryable).toBe(false);
    // The key the call carried, to call again with safely.
    expect(apiError.idempotencyKey).toBe(calls[0]?.idempotencyKey);
    expect(retries).toEqual([]);
    expect(calls).toHaveLength(1);
  });

  it("does not retry a 402 either: INSUFFICIENT_CREDITS, nothing queued", async () => {
    const sender = await h.readySender({ credits: 0 });
    const { mail, calls } = recordedClient(sender.secret);

    const error = await mail.mail
      .sendMessage({ to: client.recipient("ada@example.com"), subject: "Hi", html: "<p>Hi</p>" })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(client.MailApiError);
    expect(error).toMatchObject({ code: "INSUFFICIENT_CREDITS", status: 402, attempts: 1 });
    expect(calls).toHaveLength(1);
    const log = await h.forCompany(MailService, sender.companyId).listMessages({});
    expect(log.items).toEqual([]);
  });

  it("an unknown key is API_KEY_INVALID (401), not retried", async () => {
    const sender = await h.readySender();
    // Shaped like a real key (prefix and length), known to no company: as a revoked key.
    const mail = client.createMailClient({ apiKey: `${sender.secret.slice(0, -8)}zzzzzzzz`, baseUrl: h.app.httpUrl });
    const error = await mail.mail.getAccount({}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(client.MailApiError);
    expect(error).toMatchObject({ code: "API_KEY_INVALID", status: 401, attempts: 1 });
  });
});

describe("the TypeScript client's surface", () => {
  it("has every service an API key may call, and none that refuse keys", async () => {
    // The contract as it is now (buf build proto/), read with the client's own option descriptors.
    const dir = await mkdtemp(path.join(tmpdir(), "mail-client-services-"));
    try {
      const image = path.join(dir, "contract.binpb");
      const built = spawnSync(path.join(root, "node_modules", ".bin", "buf"), ["build", "proto", "--as-file-descriptor-set", "-o", image], {
        cwd: root,
        encoding: "utf8",
      });
      expect(built.status, built.stderr).toBe(0);
      const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, await readFile(image)));
      const keyServices: string[] = [];
      for (const type of registry) {
        if (type.kind !== "service" || !type.typeName.startsWith("mail.v1.")) continue;
        if (getOption(type, operator_only) || getOption(type, refuse_api_keys)) continue;
        if (type.methods.some((method) => getOption(method, required_scope) !== "")) keyServices.push(type.typeName);
      }
      const included = Object.values(client.COMPANY_SERVICES).map((service) => service.typeName);
      expect(included.sort()).toEqual(keyServices.sort());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses to start in a web page, where anyone could read the key", () => {
    const scope = globalThis as { document?: unknown };
    scope.document = {};
    try {
      expect(() => client.createMailClient({ apiKey: "k", baseUrl: "https://mail.example.com" })).toThrow(/servers only/);
    } finally {
      delete scope.document;
    }
  });
});
