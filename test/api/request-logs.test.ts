import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, startApp } from "../../src/wiring/api.ts";
import { adminClient, ALL_SCOPES, operatorClient, testConfig } from "../support/api-harness.ts";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { createTestDatabase, type TestDatabase } from "../support/test-database.ts";
import { type Listener, requestOn } from "./doors.ts";

/** Every line the service logs, as written. */
class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    callback();
  }
}

/**
 * Request logs hold no email addresses: searches (`?q=`) and contact paths
 * (`/contacts/{email}`) are logged with their values redacted, on both
 * listeners, at the level that logs every request.
 */
describe("request logs", () => {
  let db: TestDatabase;
  let app: App;
  let secret: string;
  const logs = new LogCapture();

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startApp({ config: testConfig({ logLevel: "info" }), databaseUrl: db.url, logger: { level: "info", stream: logs } });
    const admin = adminClient(app.operatorUrl);
    const { company } = await admin.createCompany({ name: "Logs Inc.", entitlements: { api: true, smtp: false } });
    secret = (await operatorClient(app.operatorUrl, ApiKeysService, company?.id ?? "").createApiKey({ name: "logs", scopes: ALL_SCOPES })).secret;
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it.each<Listener>(["http1", "h2c"])("redacts query values and email-shaped path segments (%s)", async (listener) => {
    const tag = `${listener}-person`;
    const urls = { httpUrl: app.httpUrl, grpcUrl: app.grpcUrl };
    const headers = { authorization: `Bearer ${secret}` };
    const before = logs.lines.length;

    const search = await requestOn(listener, urls, { method: "GET", path: `/mail/v1/messages?q=${tag}%40example.com&limit=5`, headers });
    expect(search.status).toBe(200);
    await requestOn(listener, urls, { method: "GET", path: `/mail/v1/contacts/${tag}%40example.org`, headers });
    await requestOn(listener, urls, { method: "GET", path: `/mail/v1/contacts/${tag}@example.net`, headers });
    await requestOn(listener, urls, { method: "GET", path: `/mail/v1/nowhere/${tag}@example.com?email=${tag}@example.com` });

    const lines = logs.lines.slice(before);
    const urlsLogged = lines.map((line) => (JSON.parse(line) as { req?: { url?: string } }).req?.url).filter(Boolean);
    // The requests were logged, with their shape kept.
    expect(urlsLogged).toContain("/mail/v1/messages?q=[redacted]&limit=[redacted]");
    expect(urlsLogged).toContain("/mail/v1/contacts/[email]");
    expect(urlsLogged).toContain("/mail/v1/nowhere/[email]?email=[redacted]");
    // And no address appears anywhere in the logs.
    for (const line of lines) expect(line).not.toContain(tag);
  });
});
