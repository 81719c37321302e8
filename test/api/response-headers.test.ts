import { connect, type ClientHttp2Session } from "node:http2";
import { SignupFormsService } from "../../src/gen/mail/v1/forms_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readinessOf } from "../../src/transport/http/health.ts";
import { startWorkerListener } from "../../src/transport/operator/worker-listener.ts";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";

/**
 * Issue 18 item 9 over real HTTP, real PostgreSQL: the headers every answer
 * carries on every listener, and the client address the service trusts.
 */
describe("answer headers on every listener", () => {
  let h: ApiHarness;
  let formUrl: string;
  let companyId: string;
  let secret: string;

  beforeAll(async () => {
    h = await startApiHarness({ runWorker: false });
    ({ companyId, secret } = await h.newCompanyWithKey(["mail.contacts.read", "mail.contacts.write"], "Headers Ltd"));
    const { form } = await h.forCompany(SignupFormsService, companyId).createForm({
      name: "News",
      fields: [{ name: "email", label: "Email", type: "email", required: true }],
      consentText: "Yes, send me news.",
      doubleOptIn: false,
      language: "en",
    });
    // The form's path on this listener.
    formUrl = new URL(new URL(form?.url ?? "").pathname, h.app.httpUrl).toString();
  });
  afterAll(async () => {
    await h?.close();
  });

  const token = async (): Promise<string> => {
    const html = await (await fetch(formUrl)).text();
    return /name="_token" value="([^"]+)"/.exec(html)?.[1] ?? "";
  };

  it("X-Content-Type-Options: nosniff on JSON, HTML, errors and 404s of the public HTTP listener", async () => {
    const answers: Array<[string, Response]> = [
      ["json 200", await h.fetch("/livez")],
      ["json 401", await h.fetch("/mail/v1/contacts")],
      ["json 200 with a key", await h.fetch("/mail/v1/contacts", bearer(secret))],
      ["404 of no route", await h.fetch("/nowhere")],
      ["malformed JSON", await h.fetch("/mail/v1/contacts", { method: "POST", headers: { ...bearer(secret).headers, "content-type": "application/json" }, body: "{" })],
      ["connect rpc", await h.fetch("/mail.v1.MailService/GetAccount", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })],
      ["openapi", await h.fetch("/openapi.json")],
      ["hosted page", await fetch(formUrl)],
      ["hosted 404", await h.fetch("/mail/v1/forms/AAAAAAAAAAAAAAAA")],
      ["hosted 403", await fetch(formUrl, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "email=a%40b.example&_token=x" })],
      ["hosted unreadable", await fetch(formUrl, { method: "POST", headers: { "content-type": "text/csv" }, body: "a,b" })],
      ["confirmation page", await fetch(`${formUrl}/confirm?token=nope`)],
    ];
    for (const [what, answer] of answers) expect(answer.headers.get("x-content-type-options"), `${what} (${answer.status})`).toBe("nosniff");
    const unreadable = answers.find(([what]) => what === "hosted unreadable")?.[1];
    expect(unreadable?.headers.get("content-type")).toBe("text/html; charset=utf-8");
  });

  it("nosniff on the operator listener and on the gRPC (h2c) listener", async () => {
    for (const path of ["/livez", "/metrics", "/nowhere"]) {
      expect((await fetch(new URL(path, h.app.operatorUrl))).headers.get("x-content-type-options"), path).toBe("nosniff");
    }
    const session: ClientHttp2Session = connect(h.app.grpcUrl);
    try {
      const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const stream = session.request({ ":method": "POST", ":path": "/mail.v1.MailService/GetAccount", "content-type": "application/json" });
        stream.on("response", (received) => resolve(received as Record<string, unknown>));
        stream.on("error", reject);
        stream.end("{}");
        stream.resume();
      });
      expect(headers["x-content-type-options"]).toBe("nosniff");
    } finally {
      session.close();
    }
  });

  it("nosniff on the worker process's own listener", async () => {
    const listener = await startWorkerListener({
      host: "127.0.0.1",
      port: 0,
      readiness: readinessOf({ database: async () => true }, 1_000),
      scrape: async () => ({ contentType: "text/plain; version=0.0.4", body: "" }),
    });
    try {
      for (const path of ["/livez", "/readyz", "/metrics", "/nowhere"]) {
        expect((await fetch(new URL(path, listener.url))).headers.get("x-content-type-options"), path).toBe("nosniff");
      }
    } finally {
      await listener.close();
    }
  });

  it("the hosted pages may be framed by no site: frame-ancestors 'none' on the sign-up and confirmation pages", async () => {
    for (const answer of [await fetch(formUrl), await fetch(`${formUrl}/confirm?token=nope`)]) {
      expect(answer.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(answer.headers.get("x-frame-options")).toBe("DENY");
    }
  });

  it("overwrites a spoofed x-mail-client-address: consent evidence and the failed-authentication lockout use the real address", async () => {
    const signedUp = await fetch(formUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-mail-client-address": "203.0.113.66" },
      body: new URLSearchParams({ _token: await token(), _website: "", email: "spoof@example.com" }).toString(),
    });
    expect(signedUp.status).toBe(200);
    const contact = (await (await h.fetch("/mail/v1/contacts/spoof@example.com", bearer(secret))).json()) as { consent?: { reference?: string } };
    expect(contact.consent?.reference).toContain("ip 127.0.0.1");
    expect(contact.consent?.reference).not.toContain("203.0.113.66");

    // 30 refused keys from one socket address, each claiming another address: the 31st is locked out all the same.
    let last: Response | undefined;
    for (let i = 0; i < 31; i++) {
      last = await h.fetch("/mail/v1/contacts", bearer(`tml_${"x".repeat(43)}`, { "x-mail-client-address": `203.0.113.${i + 1}` }));
    }
    expect(last?.status).toBe(429);
    expect(((await last?.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
  });
});
