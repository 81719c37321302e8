/**
 * An oversized report does not grow the API process with its size: the
 * inbound listener stops keeping a message once it passes
 * INBOUND_SMTP_MAX_BYTES and discards the rest as it arrives, then answers
 * 552 at the end of DATA.
 *
 * The API runs as its own OS process (`node src/api-main.ts`), so its
 * resident memory (/proc/<pid>/status) is the server's alone. Ten clients
 * send in step, 100 MiB of DATA each, to the VERP return path of a real
 * message (one the API accepted, on its sender's return-path domain). A
 * listener that kept what it read would grow by about the 1000 MiB sent;
 * one that discards it grows only by the read buffers the garbage collector
 * has not reclaimed yet, which does not depend on how much is sent.
 */
import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { once } from "node:events";
import { createConnection, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerpAddresses } from "../../src/capabilities/delivery-reports/verp.ts";
import { returnPathDomainFor } from "../../src/capabilities/sending-setup/dns-records.ts";
import { findFreePort } from "../../src/runtime/ports.ts";
import { startTemporalDevServer, type TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { type ApiProcess, readySender, send, startApi } from "../deploy/topology.ts";
import { createTestDatabase, type TestDatabase } from "../support/test-database.ts";
import { VERP_SECRET } from "./harness.ts";

const MiB = 1024 * 1024;
const CLIENTS = 10;
const BYTES_PER_CLIENT = 100 * MiB;
/**
 * What the process may grow by while refusing them all: a quarter of what is
 * sent. The read buffers awaiting collection measure 85-155 MiB here, more
 * when other work shares the CPU.
 */
const GROWTH_BOUND = 256 * MiB;

/**
 * One SMTP session spoken by hand, so that the test decides when each byte
 * of DATA goes out (ten sessions then send in step, each holding its share
 * of the stream at the same time).
 */
class HandSpokenSmtp {
  readonly #socket: Socket;
  #received = "";
  #wake: (() => void) | undefined;
  #failure: Error | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on("data", (chunk: Buffer) => {
      this.#received += chunk.toString("latin1");
      this.#wake?.();
    });
    socket.on("error", (error) => {
      this.#failure = error;
      this.#wake?.();
    });
    socket.on("close", () => {
      this.#failure ??= new Error("the server closed the connection");
      this.#wake?.();
    });
  }

  static async open(port: number): Promise<HandSpokenSmtp> {
    const socket = createConnection({ host: "127.0.0.1", port });
    await once(socket, "connect");
    const session = new HandSpokenSmtp(socket);
    await session.reply();
    return session;
  }

  /** The next whole reply (its last line is `ddd text`). */
  async reply(): Promise<string> {
    for (;;) {
      const last = /^\d{3} [^\r\n]*\r\n/m.exec(this.#received);
      if (last) {
        const end = last.index + last[0].length;
        const reply = this.#received.slice(0, end).trim();
        this.#received = this.#received.slice(end);
        return reply;
      }
      if (this.#failure) throw this.#failure;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }

  async command(line: string): Promise<string> {
    await this.write(`${line}\r\n`);
    return this.reply();
  }

  /** Resolves once the socket takes more (after a drain when its buffer is full). */
  async write(data: string | Buffer): Promise<void> {
    if (this.#failure) throw this.#failure;
    if (!this.#socket.write(data)) await once(this.#socket, "drain");
  }

  close(): void {
    this.#socket.destroy();
  }
}

/** MAIL FROM, RCPT TO and DATA on fresh sessions; throws unless the server takes each. */
async function openForData(port: number, to: string, count: number): Promise<HandSpokenSmtp[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const session = await HandSpokenSmtp.open(port);
      for (const [line, expected] of [
        ["EHLO mx.customer.test", /^250/],
        ["MAIL FROM:<mailer-daemon@mx.customer.test>", /^250/],
        [`RCPT TO:<${to}>`, /^250/],
        ["DATA", /^354/],
      ] as const) {
        const answer = await session.command(line);
        if (!expected.test(answer)) throw new Error(`${line}: ${answer}`);
      }
      await session.write(`From: mailer-daemon@mx.customer.test\r\nTo: ${to}\r\nSubject: Undelivered Mail\r\n\r\n`);
      return session;
    }),
  );
}

/** `bytes` of 998-character lines to every session, in step; then the end of DATA; answers each reply. */
async function sendInStep(sessions: readonly HandSpokenSmtp[], bytes: number): Promise<string[]> {
  const line = `${"x".repeat(998)}\r\n`;
  const block = Buffer.from(line.repeat(64));
  for (let sent = 0; sent < bytes; sent += block.length) await Promise.all(sessions.map((session) => session.write(block)));
  const answers = await Promise.all(sessions.map((session) => session.command(".")));
  for (const session of sessions) session.close();
  return answers;
}

/** One field of /proc/<pid>/status, in bytes. */
async function statusBytes(pid: number, field: "VmRSS" | "VmHWM"): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

describe("an oversized report to the inbound SMTP listener", { timeout: 300_000 }, () => {
  let temporal: TemporalDevServer;
  let db: TestDatabase;
  let api: ApiProcess;
  let inboundPort: number;

  beforeAll(async () => {
    [temporal, db] = await Promise.all([startTemporalDevServer(), createTestDatabase()]);
    inboundPort = await findFreePort();
    api = await startApi(
      { databaseUrl: db.url, temporalAddress: temporal.address, taskQueue: `oversize-${randomBytes(3).toString("hex")}` },
      {
        VERP_SECRET,
        INBOUND_SMTP_ENABLED: "true",
        INBOUND_SMTP_HOST: "127.0.0.1",
        INBOUND_SMTP_PORT: String(inboundPort),
        INBOUND_SMTP_MAX_BYTES: String(MiB),
      },
    );
  }, 300_000);

  afterAll(async () => {
    await api?.process.kill();
    await temporal?.stop();
    await db?.drop();
  });

  /** The VERP return path a real message leaves with: its id, its sender's return-path domain. */
  async function realReturnPath(): Promise<string> {
    const sender = await readySender(api, 5);
    const response = await send(api.httpUrl, sender.secret, { to: "reader@customer.test", subject: "Your receipt", html: "<p>Thanks</p>" });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const { rows } = await db.query<{ from_email: string }>("select from_email from message where id = $1", [id]);
    const fromDomain = rows[0]?.from_email.split("@")[1] ?? "";
    return new VerpAddresses(VERP_SECRET).addressFor(id, returnPathDomainFor(fromDomain));
  }

  it("ten clients sending 100 MiB each at once are each answered 552, and the process grows by far less than they sent", async () => {
    const to = await realReturnPath();
    // The code paths of a refusal are loaded before the baseline.
    expect(await sendInStep(await openForData(inboundPort, to, 1), 2 * MiB)).toEqual([expect.stringMatching(/^552/)]);

    const pid = api.process.child.pid ?? 0;
    const before = await statusBytes(pid, "VmRSS");
    // Resets the process's peak resident size (VmHWM) to its current one.
    await writeFile(`/proc/${pid}/clear_refs`, "5");
    let sampledPeak = before;
    let sending = true;
    const sampler = (async () => {
      while (sending) {
        sampledPeak = Math.max(sampledPeak, await statusBytes(pid, "VmRSS"));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const answers = await sendInStep(await openForData(inboundPort, to, CLIENTS), BYTES_PER_CLIENT);
    sending = false;
    await sampler;
    const peak = Math.max(sampledPeak, await statusBytes(pid, "VmHWM"));
    const growth = peak - before;
    console.log(
      `inbound SMTP, ${CLIENTS} x ${BYTES_PER_CLIENT / MiB} MiB oversize: RSS before ${(before / MiB).toFixed(0)} MiB, ` +
        `peak ${(peak / MiB).toFixed(0)} MiB, growth ${(growth / MiB).toFixed(1)} MiB`,
    );

    expect(answers).toHaveLength(CLIENTS);
    for (const answer of answers) expect(answer).toMatch(/^552 5\.3\.4 /);
    expect(growth).toBeLessThan(GROWTH_BOUND);
  });
});
