import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiErrorFrom } from "../../src/contract/api-error.ts";
import { StreamEndReason, type StreamEventsResponse, WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import type { App } from "../../src/wiring/api.ts";
import { OPERATOR_TOKEN } from "../support/api-harness.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { signedIn } from "../api/members-support.ts";
import { type DeliveryBody, loopbackDelivery, type RoutedReceiver, startRoutedReceiver, verifiedBody, waitUntil } from "./api-support.ts";

/**
 * `mailctl listen` and `mailctl trigger` end to end, with real parts: the
 * service (two API processes on one database, each with its worker, on a
 * Temporal dev server), the real command line as a child process, a
 * receiver on 127.0.0.1 that checks every request as the spec tells
 * receivers to (raw body, HMAC-SHA256 of `t.body` with the secret listen
 * printed, constant-time comparison, five minutes of tolerance) and
 * answers 400 to a request that fails, and a real HTTPS endpoint of the
 * company to compare with what a real delivery carries.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

// ---------------------------------------------------------------- the local receiver

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** What the receiver's own check said. */
  readonly verified: boolean;
}

/** The spec's receiver rules, written here independently of the service's code. */
function receiverAccepts(body: string, header: string, secret: string): boolean {
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of header.split(",")) {
    const [key, value = ""] = part.split("=");
    if (key === "t" && /^\d+$/.test(value)) t = Number(value);
    if (key === "v1") v1.push(value);
  }
  if (t === undefined) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest();
  let matched = false;
  for (const candidate of v1) {
    const given = Buffer.from(candidate, "hex");
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched && Math.abs(Date.now() / 1000 - t) <= 300;
}

interface LocalReceiver {
  readonly url: string;
  readonly received: Received[];
  /** The secret each path verifies with (the one its listener printed). */
  readonly secrets: Map<string, string>;
  waitOn(path: string, count: number): Promise<Received[]>;
  close(): Promise<void>;
}

async function startLocalReceiver(): Promise<LocalReceiver> {
  const received: Received[] = [];
  const secrets = new Map<string, string>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      // The raw body exactly as received, before any JSON parsing.
      const body = Buffer.concat(chunks).toString("utf8");
      const path = request.url ?? "";
      const secret = secrets.get(path) ?? "";
      const verified = receiverAccepts(body, String(request.headers["service-signature"] ?? ""), secret);
      received.push({ path, headers: request.headers, body, verified });
      response.writeHead(verified ? 200 : 400).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const on = (path: string) => received.filter((r) => r.path === path);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    secrets,
    async waitOn(path, count) {
      return waitUntil(async () => (on(path).length >= count ? on(path) : undefined), `${count} requests on ${path}`);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

// ---------------------------------------------------------------- mailctl as a child process

class Listener {
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: string[] = [];
  stderr = "";
  readonly exited: Promise<number | null>;

  constructor(args: readonly string[], env: Record<string, string>) {
    this.child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", "src/cli/mailctl.ts", "listen", ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    let pending = "";
    this.child.stdout.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      const parts = pending.split("\n");
      pending = parts.pop() ?? "";
      this.lines.push(...parts);
    });
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString("utf8");
    });
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  /** The first line matching `pattern`, waiting for it. */
  async line(pattern: RegExp): Promise<RegExpMatchArray> {
    return waitUntil(async () => {
      for (const line of this.lines) {
        const match = pattern.exec(line);
        if (match) return match;
      }
      if (this.child.exitCode !== null) throw new Error(`mailctl listen exited ${this.child.exitCode}: ${this.stderr}`);
      return undefined;
    }, `a line ${pattern} from mailctl listen (so far: ${this.lines.join(" | ")})`);
  }

  /** The secret it printed, once it is ready. */
  async secret(): Promise<string> {
    await this.line(/Ready! Forwarding/);
    return (await this.line(/Your webhook signing secret is (whsec_\S+)/))[1] ?? "";
  }

  /** ^C, as a developer stops it: its exit code. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill("SIGINT");
    return this.exited;
  }
}

const listeners: Listener[] = [];

function listen(args: readonly string[], env: Record<string, string>): Listener {
  const listener = new Listener(args, { MAIL_API_KEY: "", OPERATOR_TOKEN: "", ...env });
  listeners.push(listener);
  return listener;
}

async function mailctl(args: readonly string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--disable-warning=ExperimentalWarning", "src/cli/mailctl.ts", ...args], {
      cwd: ROOT,
      env: { ...process.env, MAIL_API_KEY: "", OPERATOR_TOKEN: "", ...env },
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

function errorOf(stderr: string): { code: string; message: string } {
  return (JSON.parse(stderr) as { error: { code: string; message: string } }).error;
}

// ---------------------------------------------------------------- streams opened by the test itself

function bearer(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

interface OpenStream {
  readonly first: StreamEventsResponse;
  readonly rest: AsyncIterator<StreamEventsResponse>;
  close(): void;
}

async function openStream(transport: Transport, events: string[] = []): Promise<OpenStream> {
  const controller = new AbortController();
  const iterator = createClient(WebhooksService, transport).streamEvents({ events }, { signal: controller.signal })[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) throw new Error("the stream ended before its first message");
  return { first: first.value, rest: iterator, close: () => controller.abort() };
}

async function refusalOf(transport: Transport): Promise<ConnectError> {
  try {
    const stream = await openStream(transport);
    stream.close();
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("the stream was opened");
}

// ----------------------------------------------------------------

let h: SendingHarness;
let second: App;
let local: LocalReceiver;
let hooks: RoutedReceiver;

beforeAll(async () => {
  hooks = await startRoutedReceiver();
  // Real endpoints on 127.0.0.1 (loopback allowed for the test's receiver), to compare with.
  h = await startSendingHarness({}, undefined, { webhookDelivery: loopbackDelivery(hooks.certificate) });
  second = await h.startSecondInstance();
  local = await startLocalReceiver();
});

afterAll(async () => {
  for (const listener of listeners) await listener.stop();
  await h?.close();
  await local?.close();
  await hooks?.close();
});

async function sendTo(secret: string, email: string): Promise<string> {
  const response = await h.send(secret, { to: email, subject: "Your receipt", html: "<p>Thanks</p>" });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

function bodyOf(request: Received): DeliveryBody {
  return JSON.parse(request.body) as DeliveryBody;
}

describe("mailctl listen", () => {
  it("forwards a company's events as deliveries are posted, signed with the secret it printed; another company's never arrive", async () => {
    const a = await h.readySender();
    const aAdmin = await h.newKey(a.companyId, ["mail.admin"]);
    const b = await h.readySender();
    // A real endpoint of A, to compare the forwarded requests with a real delivery.
    const endpoint = await h.forCompany(WebhooksService, a.companyId).createWebhookEndpoint({ url: hooks.urlFor("/real/a"), events: ["sent"] });

    // A developer of A, with an API key on the public port; an operator for B, on the other API process's operator listener.
    const listenerA = listen(["--forward-to", `${local.url}/a`, "--events", "sent,delivered", "--url", h.app.httpUrl], { MAIL_API_KEY: aAdmin.secret });
    const listenerB = listen(["--forward-to", `${local.url}/b`, "--company", b.companyId], { OPERATOR_TOKEN, MAIL_ADMIN_URL: second.operatorUrl });
    const secretA = await listenerA.secret();
    const secretB = await listenerB.secret();
    expect(secretA).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    await listenerA.line(/Ready! Forwarding sent, delivered to http:\/\/127\.0\.0\.1:\d+\/a$/);
    await listenerB.line(/Ready! Forwarding every event to http:\/\/127\.0\.0\.1:\d+\/b$/);
    expect(secretB).not.toBe(secretA);
    local.secrets.set("/a", secretA);
    local.secrets.set("/b", secretB);

    const messageA = await sendTo(a.secret, "delivered@customer.example");
    const messageB = await sendTo(b.secret, "delivered@customer.example");
    await h.waitForMessage(a.secret, messageA, (m) => m.status === "delivered");
    await h.waitForMessage(b.secret, messageB, (m) => m.status === "delivered");

    // A asked for sent and delivered; B for every kind (message.accepted too).
    const atA = await local.waitOn("/a", 2);
    const atB = await local.waitOn("/b", 3);
    expect(atA.map((r) => bodyOf(r).event).sort()).toEqual(["delivered", "sent"]);
    expect(atB.map((r) => bodyOf(r).event).sort()).toEqual(["delivered", "message.accepted", "sent"]);
    expect(atA.every((r) => bodyOf(r).data.messageId === messageA)).toBe(true);
    expect(atB.every((r) => bodyOf(r).data.messageId === messageB)).toBe(true);

    for (const [request, secret, other] of [...atA.map((r) => [r, secretA, secretB] as const), ...atB.map((r) => [r, secretB, secretA] as const)]) {
      // The receiver's own check, the stripe verifier, and not the other session's secret.
      expect(request.verified).toBe(true);
      const body = verifiedBody({ method: "POST", servername: false, ...request }, secret);
      expect(receiverAccepts(request.body, String(request.headers["service-signature"]), other)).toBe(false);
      expect(Object.keys(body)).toEqual(["id", "event", "occurredAt", "data"]);
      expect(request.headers["content-type"]).toBe("application/json");
      expect(request.headers["user-agent"]).toBe("Service-Mail-Webhooks/1.0");
      expect(request.headers["service-delivery"]).toBe(body.id);
      expect(request.headers["service-attempt"]).toBe("1");
      // The real ids: the event's outbox row, its data and time as recorded.
      const { rows } = await h.db.query<{ id: string; data: Record<string, unknown>; occurred_at: Date }>(
        `select id, data, occurred_at from webhook_event where id = $1`,
        [body.id],
      );
      expect(rows[0]?.data).toEqual(body.data);
      expect(rows[0]?.occurred_at.toISOString()).toBe(body.occurredAt);
    }
    // Every forward was answered 200 by the receiver, as the listener printed.
    await listenerA.line(/<-- \[200\] POST http:\/\/127\.0\.0\.1:\d+\/a \[/);

    // The real delivery of `sent` to A's endpoint carries the same body but for its own delivery id, and the same headers.
    const [real] = await hooks.waitOn("/real/a", 1);
    if (!real) throw new Error("no real delivery");
    const forwarded = atA.find((r) => bodyOf(r).event === "sent");
    if (!forwarded) throw new Error("no forwarded sent");
    const { id: realId, ...realRest } = JSON.parse(real.body) as DeliveryBody;
    const { id: forwardedId, ...forwardedRest } = bodyOf(forwarded);
    expect(forwardedRest).toEqual(realRest);
    expect(realId).not.toBe(forwardedId);
    const headerNames = (headers: IncomingHttpHeaders) => ["content-type", "user-agent", "service-signature", "service-delivery", "service-attempt"].map((name) => typeof headers[name]);
    expect(headerNames(forwarded.headers)).toEqual(headerNames(real.headers));
    expect(real.headers["user-agent"]).toBe(forwarded.headers["user-agent"]);
    expect(endpoint.endpoint?.id).toBeTruthy();

    // Nothing of one company reached the other's listener.
    expect(local.received.filter((r) => r.path === "/a").every((r) => bodyOf(r).data.messageId !== messageB)).toBe(true);
    expect(local.received.filter((r) => r.path === "/b").every((r) => bodyOf(r).data.messageId !== messageA)).toBe(true);
    // ^C ends it quietly.
    expect(await listenerA.stop()).toBe(0);
    expect(listenerA.stderr).toBe("");
  });

  it("`mailctl trigger` publishes a test event to the company's listeners, and to its endpoints only with --endpoints", async () => {
    const c = await h.readySender();
    const admin = await h.newKey(c.companyId, ["mail.admin"]);
    await h.forCompany(WebhooksService, c.companyId).createWebhookEndpoint({ url: hooks.urlFor("/real/c"), events: ["sent"] });
    const listener = listen(["--forward-to", `${local.url}/c`, "--url", h.app.httpUrl], { MAIL_API_KEY: admin.secret });
    local.secrets.set("/c", await listener.secret());

    const quiet = await mailctl(["trigger", "sent", "--url", h.app.httpUrl], { MAIL_API_KEY: admin.secret });
    expect(quiet.code, quiet.stderr).toBe(0);
    const triggered = JSON.parse(quiet.stdout) as { id: string; event: string; occurredAt: string; endpoints: boolean };
    expect(triggered).toMatchObject({ event: "sent", endpoints: false });

    // The operator triggers one for the endpoints too.
    const loud = await mailctl(["trigger", "sent", "--endpoints", "--company", c.companyId], { OPERATOR_TOKEN, MAIL_ADMIN_URL: h.app.operatorUrl });
    expect(loud.code, loud.stderr).toBe(0);
    const delivered = JSON.parse(loud.stdout) as { id: string; endpoints: boolean };
    expect(delivered.endpoints).toBe(true);

    const atC = await local.waitOn("/c", 2);
    const bodies = atC.map(bodyOf);
    expect(bodies.map((body) => body.id)).toEqual([triggered.id, delivered.id]);
    for (const [index, body] of bodies.entries()) {
      expect(atC[index]?.verified).toBe(true);
      expect(body).toMatchObject({ event: "sent", data: { test: true, email: "recipient@example.com" } });
    }
    expect(bodies[0]?.occurredAt).toBe(triggered.occurredAt);

    // The endpoint got the second one only, as a delivery like any other.
    const [real] = await hooks.waitOn("/real/c", 1);
    expect((JSON.parse(real?.body ?? "{}") as DeliveryBody).data).toEqual(bodies[1]?.data);
    const made = await h.db.query<{ event_id: string }>(`select event_id from webhook_delivery where company_id = $1`, [c.companyId]);
    expect(made.rows.map((row) => row.event_id)).toEqual([delivered.id]);

    // An unknown kind is the caller's mistake, named.
    const unknown = await mailctl(["trigger", "sent.typo", "--url", h.app.httpUrl], { MAIL_API_KEY: admin.secret });
    expect(unknown.code).toBe(1);
    expect(errorOf(unknown.stderr)).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringContaining("event") });
  });

  it("holds at most 5 streams of a company over every API process: the sixth is refused until one closes", async () => {
    const { companyId, secret } = await h.newCompanyWithKey(["mail.admin"], "Five streams");
    const connectOn = (app: App) => createConnectTransport({ baseUrl: app.httpUrl, httpVersion: "1.1", interceptors: [bearer(secret)] });
    const grpcOn = (app: App) => createGrpcTransport({ baseUrl: app.grpcUrl, interceptors: [bearer(secret)] });
    const open = [
      await openStream(connectOn(h.app)),
      await openStream(grpcOn(h.app)),
      await openStream(connectOn(h.app)),
      await openStream(grpcOn(second)),
      await openStream(connectOn(second)),
    ];
    for (const stream of open) expect(stream.first.kind.case).toBe("ready");
    try {
      const sixth = listen(["--forward-to", `${local.url}/six`, "--url", h.app.httpUrl], { MAIL_API_KEY: secret });
      expect(await sixth.exited).toBe(1);
      expect(errorOf(sixth.stderr)).toEqual({ code: "RATE_LIMITED", message: expect.stringContaining("5 event streams open already") });
      const refused = await refusalOf(grpcOn(second));
      expect(refused.code).toBe(Code.ResourceExhausted);
      expect(apiErrorFrom(refused)?.code).toBe("RATE_LIMITED");

      // A place given back (on the other process) can be taken here.
      open.pop()?.close();
      const again = await waitUntil(async () => openStream(connectOn(h.app)).catch(() => undefined), "a place given back");
      expect(again.first.kind.case).toBe("ready");
      open.push(again);
      void companyId;
    } finally {
      for (const stream of open) stream.close();
    }
  });

  it("is for Mail administrators: a key without mail.admin and a member's session are refused (403), an owner's session streams", async () => {
    const { companyId, secret } = await h.newCompanyWithKey(["mail.events.read", "mail.transactional.send"], "Read only");
    const refused = listen(["--forward-to", `${local.url}/ro`, "--url", h.app.httpUrl], { MAIL_API_KEY: secret });
    expect(await refused.exited).toBe(1);
    expect(errorOf(refused.stderr)).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("mail.admin") });
    expect((await refusalOf(createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors: [bearer(secret)] }))).code).toBe(Code.PermissionDenied);
    // A kind that is not an event name is the caller's mistake, named (checked after the key's scope).
    const { secret: adminKey } = await h.newKey(companyId, ["mail.admin"]);
    const typo = listen(["--forward-to", `${local.url}/typo`, "--events", "sent,deliverd", "--url", h.app.httpUrl], { MAIL_API_KEY: adminKey });
    expect(await typo.exited).toBe(1);
    expect(errorOf(typo.stderr)).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringContaining("events: unknown event \"deliverd\"") });

    // The screen's way in: a member session over Connect, from the service's own origin.
    const asBrowser = (cookie: string | undefined): Transport => {
      const browser: Interceptor = (next) => (req) => {
        req.header.set("cookie", `__Host-mail_session=${cookie ?? ""}`);
        req.header.set("origin", new URL(h.app.httpUrl).origin);
        req.header.set("connect-protocol-version", "1");
        return next(req);
      };
      return createConnectTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1", useBinaryFormat: false, interceptors: [browser] });
    };
    const member = await signedIn(h, companyId, "member@read-only.example", "member");
    const denied = await refusalOf(asBrowser(member.cookie));
    expect(apiErrorFrom(denied)?.code).toBe("FORBIDDEN");
    const owner = await signedIn(h, companyId, "owner@read-only.example", "owner");
    const stream = await openStream(asBrowser(owner.cookie), ["delivered"]);
    try {
      expect(stream.first.kind.case === "ready" && stream.first.kind.value.events).toEqual(["delivered"]);
    } finally {
      stream.close();
    }
  });

  it("ends its streams cleanly when the service shuts down: the stream says why and closes with OK, the listener stays to reconnect", async () => {
    const { secret } = await h.newCompanyWithKey(["mail.admin"], "Shutdown");
    const listener = listen(["--forward-to", `${local.url}/shutdown`, "--url", second.httpUrl], { MAIL_API_KEY: secret });
    await listener.secret();
    const stream = await openStream(createConnectTransport({ baseUrl: second.httpUrl, httpVersion: "1.1", interceptors: [bearer(secret)] }));

    await second.close();

    // The last message says why, and the stream then ends without an error.
    const rest: StreamEventsResponse[] = [];
    for (let next = await stream.rest.next(); !next.done; next = await stream.rest.next()) rest.push(next.value);
    const last = rest.at(-1)?.kind;
    expect(last?.case === "end" && last.value.reason).toBe(StreamEndReason.SHUTDOWN);
    await listener.line(/The service is shutting down; it closed the stream\./);
    await listener.line(/Opening the stream again in \d+ s\./);
    expect(listener.child.exitCode).toBeNull();
    expect(await listener.stop()).toBe(0);
  });
});
