import type { SignupForms } from "../../src/capabilities/forms/index.ts";
import type { ConversionRecorder } from "../../src/transport/connect/conversions/index.ts";
import type { Contacts } from "../../src/capabilities/contacts/index.ts";
import { describe, expect, it } from "vitest";
import { rawHttp1 } from "../api/doors.ts";
import { GOOD_KEY, startStubApi } from "./stub-api.ts";

describe("shutdown", () => {
  it("an HTTP/1.1 keep-alive connection busy when shutdown starts gets its answer, then is closed", async () => {
    let release = () => {};
    let entered = () => {};
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    // A keep-alive timeout longer than the test: only the answer's `Connection: close` can end the connection in time.
    const api = await startStubApi({
      timeouts: { keepAliveMs: 600_000, idleMs: 600_000 },
      mail: {
        contacts: {} as Contacts,
      forms: {} as SignupForms,
      conversions: {} as ConversionRecorder,
        credits: { balance: () => Promise.resolve(0) },
        acceptance: {
          async send() {
            entered();
            await new Promise<void>((resolve) => (release = resolve));
            return { id: "00000000-0000-4000-8000-000000000003", status: "queued", replayed: false };
          },
        },
        messages: {
          get: () => Promise.reject(new Error("not used")),
          list: () => Promise.resolve({ items: [], nextCursor: null }),
        },
      },
    });
    const body = JSON.stringify({ to: "a@example.com", subject: "Hello", html: "<p>Hello</p>" });
    const exchange = await rawHttp1(
      api.httpUrl,
      [
        "POST /mail/v1/send HTTP/1.1",
        "host: localhost",
        `authorization: Bearer ${GOOD_KEY}`,
        "content-type: application/json",
        `content-length: ${body.length}`,
        "",
        body,
      ].join("\r\n"),
    );
    await inHandler;
    const closing = api.close();
    // Shutdown has begun once the listener stopped accepting connections.
    while (api.servers.http.server.listening) await new Promise((resolve) => setTimeout(resolve, 10));
    release();

    const { answer } = await exchange.closed;
    expect(answer?.status).toBe(202);
    expect(answer?.headers.connection).toBe("close");
    await closing;
  });
});
