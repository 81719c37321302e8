import { spawnSync } from "node:child_process";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSecretSealer, type SealingKey, sealingKeyIdOf } from "../../src/capabilities/sending-setup/key-sealing.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { EventsService } from "../../src/gen/mail/v1/events_pb.js";
import { WebhookDeliveryState, WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { type App, startApp } from "../../src/wiring/api.ts";
import { type AdminClient, adminClient, ALL_SCOPES, type ApiHarness, bearer, OPERATOR_TOKEN, operatorClient } from "../support/api-harness.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { createDoubleOptInForm, waitForConfirmationMail } from "../support/forms.ts";
import { type RoutedReceiver, startRoutedReceiver, verifies, waitUntil, loopbackDelivery } from "../webhooks/api-support.ts";
import { PostgresMessageStore } from "../../src/adapters/postgres/messages/message-store.ts";
import { poolOf } from "../../src/adapters/postgres/sql.ts";

/**
 * Rotating the service's keys (docs/operations.md, "Rotating keys"), over real
 * processes on one PostgreSQL and one Temporal server:
 *
 * - the data encryption keys have ids: a value sealed under k1 still opens
 *   once k2 is added (and seals), a value sealed before ids with the legacy
 *   key still opens, and a secret no configured key opens makes its
 *   deliveries dead letters (the delivery activity's retry maximum) instead
 *   of retrying for ever;
 * - the API key pepper and the cursor, form-token and confirmation keys are
 *   separate secrets: rotating the pepper leaves cursors, sign-up pages and
 *   confirmation links valid, and rotating those leaves API keys valid.
 */

const key = (id: string): SealingKey => ({ id, secret: `${id}-data-encryption-key-0123456789abcdef` });
const K1 = key("k1");
const K2 = key("k2");
const K9 = key("k9");
const LEGACY = "legacy-data-encryption-key-0123456789abcdef";

describe("sealing with key ids", () => {
  it("seals with the first key, opens with any configured one, and opens legacy values with the legacy key", () => {
    const before = createSecretSealer(undefined, [K1]);
    const sealedWithK1 = before.seal("whsec_one", "company/endpoint");
    expect(sealingKeyIdOf(sealedWithK1)).toBe("k1");

    // Add k2 in front: it seals, k1 still opens.
    const after = createSecretSealer(LEGACY, [K2, K1]);
    expect(after.unseal(sealedWithK1, "company/endpoint")).toBe("whsec_one");
    const sealedWithK2 = after.seal("whsec_two", "company/endpoint");
    expect(sealingKeyIdOf(sealedWithK2)).toBe("k2");
    expect(after.unseal(sealedWithK2, "company/endpoint")).toBe("whsec_two");

    // A value from before key ids: the legacy key opens it, and only the legacy key.
    const legacyValue = createSecretSealer(LEGACY).seal("dkim-private-key", "company/domain");
    expect(sealingKeyIdOf(legacyValue)).toBeNull();
    expect(legacyValue.startsWith("v1.")).toBe(true);
    expect(after.unseal(legacyValue, "company/domain")).toBe("dkim-private-key");
    expect(() => createSecretSealer(undefined, [K2, K1]).unseal(legacyValue, "company/domain")).toThrow(/legacy key/);

    // Retiring k1 too early: its values no longer open, and the error names the key id (never a key).
    expect(() => createSecretSealer(undefined, [K2]).unseal(sealedWithK1, "company/endpoint")).toThrow(/key id k1, which is not configured/);
    // A value relabelled with another key's id, another context, or altered bytes: refused.
    expect(() => after.unseal(sealedWithK1.replace("v2.k1.", "v2.k2."), "company/endpoint")).toThrow();
    expect(() => after.unseal(sealedWithK2, "other/endpoint")).toThrow();
    expect(() => after.unseal("v2.k2.a.b", "company/endpoint")).toThrow(/format/);
    // The same secret under two ids, or a key twice: refused at start.
    expect(() => createSecretSealer(undefined, [K1, { ...K2, id: "k1" }])).toThrow(/twice/);
    expect(() => createSecretSealer(undefined, [])).toThrow();
  });
});

describe("rotating keys on running processes", () => {
  let hooks: RoutedReceiver;
  let h: SendingHarness;
  let events: Client<typeof EventsService>;
  const started: App[] = [];

  const operator: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
    return next(req);
  };

  /** Another API process on the same database and Temporal server, with other keys (no worker). */
  async function otherProcess(
    keys: Partial<Config>,
  ): Promise<{ app: App; admin: AdminClient; forCompany: ApiHarness["forCompany"] }> {
    const app = await startApp({
      config: { ...h.app.config, runWorker: false, ...keys },
      databaseUrl: h.db.url,
      logger: { level: "error" },
      webhookDelivery: overrides(),
    });
    started.push(app);
    return { app, admin: adminClient(app.operatorUrl), forCompany: (service, companyId) => operatorClient(app.operatorUrl, service, companyId) };
  }

  // Two attempts a round, one second apart: a dead letter comes after two attempts that could not run.
  const overrides = () => ({ ...loopbackDelivery(hooks.certificate), schedule: { maxAttempts: 2, waitsSeconds: [1], deadLetterWaitSeconds: 600 } });

  beforeAll(async () => {
    hooks = await startRoutedReceiver();
    h = await startSendingHarness(
      { dataEncryptionKey: LEGACY, dataEncryptionKeys: [K2, K1], webhookEndpointsPerHost: 10 },
      undefined,
      { webhookDelivery: overrides() },
    );
    events = createClient(EventsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1", interceptors: [operator] }));
  }, 120_000);

  afterAll(async () => {
    for (const app of started) await app.close();
    await h?.close();
    await hooks?.close();
  });

  /** The signing secrets as the configuration derives them from these variables (the rest unset, as in development). */
  function secretsFrom(env: NodeJS.ProcessEnv): Partial<Config> {
    const { apiKeyPepper, cursorSecret, formTokenSecret, confirmationSecret } = loadConfig(env);
    return { apiKeyPepper, cursorSecret, formTokenSecret, confirmationSecret };
  }

  async function sealedOf(endpointId: string): Promise<{ current: string; previous: string | null }> {
    const { rows } = await h.db.query<{ secret_sealed: string; previous_secret_sealed: string | null }>(
      "select secret_sealed, previous_secret_sealed from webhook_endpoint where id = $1",
      [endpointId],
    );
    const row = rows[0];
    if (!row) throw new Error(`no endpoint ${endpointId}`);
    return { current: row.secret_sealed, previous: row.previous_secret_sealed };
  }

  async function publishOrder(companyId: string): Promise<void> {
    await events.publishEvent({
      companyId,
      eventId: randomUUID(),
      event: "order.paid",
      occurredAt: timestampNow(),
      data: { case: "order", value: { integrationId: "int_1", provider: "woocommerce", order: { id: 1001 } } },
    });
  }

  it("keeps old secrets working when k2 is added, seals new ones with k2, and dead-letters a secret no key opens", async () => {
    const { companyId } = await h.newCompanyWithKey(ALL_SCOPES, "Rotating Ltd");
    const create = async (on: Pick<ApiHarness, "forCompany">, path: string) => {
      const created = await on.forCompany(WebhooksService, companyId).createWebhookEndpoint({ url: hooks.urlFor(path), events: ["order.paid"] });
      return { id: created.endpoint?.id ?? "", secret: created.secret };
    };

    // Sealed by processes of earlier configurations: the legacy key alone, k1 alone, and k9 (since lost).
    const legacy = await create((await otherProcess({ dataEncryptionKey: LEGACY, dataEncryptionKeys: [] })), "/legacy");
    const k1 = await create((await otherProcess({ dataEncryptionKey: undefined, dataEncryptionKeys: [K1] })), "/k1");
    const lost = await create((await otherProcess({ dataEncryptionKey: undefined, dataEncryptionKeys: [K9] })), "/lost");
    // The current configuration (legacy, then k2 and k1): k2 seals.
    const k2 = await create(h, "/k2");
    expect((await sealedOf(legacy.id)).current).toMatch(/^v1\./);
    expect((await sealedOf(k1.id)).current).toMatch(/^v2\.k1\./);
    expect((await sealedOf(lost.id)).current).toMatch(/^v2\.k9\./);
    expect((await sealedOf(k2.id)).current).toMatch(/^v2\.k2\./);

    await publishOrder(companyId);
    // Every secret a configured key opens signs its delivery, and the receiver's verifier accepts it.
    for (const { path, secret } of [
      { path: "/legacy", secret: legacy.secret },
      { path: "/k1", secret: k1.secret },
      { path: "/k2", secret: k2.secret },
    ]) {
      const [request] = await hooks.waitOn(path, 1, 30_000);
      expect(request && verifies(request, secret), path).toBe(true);
    }

    // The secret sealed under k9 opens nowhere: each attempt runs out of tries, is recorded as a
    // failure without a request, and the last one of the round makes a dead letter.
    const deadLetter = await waitUntil(
      async () => {
        const { items } = await h.forCompany(WebhooksService, companyId).listWebhookDeliveries({ endpointId: lost.id });
        const delivery = items[0];
        return delivery?.state === WebhookDeliveryState.DEAD_LETTER ? delivery : undefined;
      },
      "the undecryptable delivery to become a dead letter",
      110_000,
    );
    expect(deadLetter).toMatchObject({ attemptCount: 2, lastError: "network" });
    expect(deadLetter.lastStatus).toBeUndefined();
    expect(hooks.on("/lost")).toEqual([]);

    // Rotating the k1 endpoint's secret seals the new one with k2 and keeps the old one (k1) for the overlap.
    const rotated = await h.forCompany(WebhooksService, companyId).rotateWebhookSecret({ id: k1.id });
    const after = await sealedOf(k1.id);
    expect(after.current).toMatch(/^v2\.k2\./);
    expect(after.previous).toMatch(/^v2\.k1\./);
    await publishOrder(companyId);
    const requests = await hooks.waitOn("/k1", 2, 30_000);
    const latest = requests.at(-1);
    expect(latest && verifies(latest, rotated.secret)).toBe(true);
    expect(latest && verifies(latest, k1.secret)).toBe(true);
  }, 180_000);

  it("seals every stored secret again under the new key (reseal-secrets.ts), after which the old keys can go", async () => {
    const { companyId } = await h.newCompanyWithKey(ALL_SCOPES, "Retiring Ltd");
    const legacyProcess = await otherProcess({ dataEncryptionKey: LEGACY, dataEncryptionKeys: [] });
    const domainName = `retire-${randomUUID().slice(0, 8)}.example`;
    const { domain } = await legacyProcess.admin.createSendingDomain({ companyId, domain: domainName });
    const k1Process = await otherProcess({ dataEncryptionKey: undefined, dataEncryptionKeys: [K1] });
    const created = await k1Process.forCompany(WebhooksService, companyId).createWebhookEndpoint({ url: hooks.urlFor("/retire"), events: ["order.paid"] });
    const endpointId = created.endpoint?.id ?? "";
    const lost = await (await otherProcess({ dataEncryptionKey: undefined, dataEncryptionKeys: [K9] })).forCompany(WebhooksService, companyId).createWebhookEndpoint({
      url: hooks.urlFor("/retire-lost"),
      events: ["order.paid"],
    });
    const dkimOf = async (): Promise<string> =>
      (await h.db.query<{ sealed: string }>("select dkim_private_key_sealed as sealed from sending_domain where company_id = $1", [companyId])).rows[0]
        ?.sealed ?? "";
    expect(await dkimOf()).toMatch(/^v1\./);
    expect((await sealedOf(endpointId)).current).toMatch(/^v2\.k1\./);
    // A sign-in email of the service's own, queued by a k1 process: its body is sealed under k1.
    await legacyProcess.admin.verifySendingDomain({ companyId, domainId: domain?.id ?? "", override: true });
    const { sender } = await legacyProcess.admin.createSender({ companyId, email: `no-reply@${domainName}` });
    const systemMail = await new PostgresMessageStore(poolOf(k1Process.app.orm), { sealer: k1Process.app.sealer }).insertQueued({
      id: randomUUID(),
      companyId,
      apiKeyId: null,
      idempotencyKey: null,
      recipient: "member@retiring.example",
      recipientName: null,
      senderId: sender?.id ?? "",
      fromEmail: `no-reply@${domainName}`,
      fromName: null,
      replyTo: null,
      subject: "Sign in",
      html: "<p>https://mail.example/admin/sign-in#token=secret</p>",
      text: "https://mail.example/admin/sign-in#token=secret",
      templateId: null,
      tags: {},
      system: true,
    });
    const bodyOf = async (): Promise<{ html: string; text_body: string }> =>
      (await h.db.query<{ html: string; text_body: string }>("select html, text_body from message where id = $1", [systemMail.message.id])).rows[0] ?? {
        html: "",
        text_body: "",
      };
    expect((await bodyOf()).html).toMatch(/^v2\.k1\./);

    // The operator's command, as a process, with the new key list (k2 first) and the legacy key.
    const run = spawnSync(process.execPath, ["--disable-warning=ExperimentalWarning", "src/adapters/postgres/reseal-secrets.ts"], {
      cwd: fileURLToPath(new URL("../../", import.meta.url)),
      env: {
        PATH: process.env.PATH ?? "",
        DATABASE_URL: h.db.url,
        DATA_ENCRYPTION_KEY: LEGACY,
        DATA_ENCRYPTION_KEYS: [K2, K1].map((k) => `${k.id}:${k.secret}`).join(","),
      },
      encoding: "utf8",
      timeout: 60_000,
    });
    // The secret sealed under k9 opens nowhere: reported by row id (never a value), left unchanged, exit code 1.
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toContain(`webhook_endpoint.secret_sealed: row ${lost.endpoint?.id} opens with no configured key (left unchanged)`);
    expect(run.stdout + run.stderr).not.toContain(lost.secret);
    expect(run.stdout + run.stderr).not.toContain(K1.secret);
    expect(run.stdout).toMatch(/^sending_domain\.dkim_private_key_sealed: \d+ sealed again under key k2, \d+ already were$/m);
    expect(await dkimOf()).toMatch(/^v2\.k2\./);
    expect((await sealedOf(endpointId)).current).toMatch(/^v2\.k2\./);
    expect((await sealedOf(lost.endpoint?.id ?? "")).current).toMatch(/^v2\.k9\./);
    expect((await bodyOf()).html).toMatch(/^v2\.k2\./);
    expect((await bodyOf()).text_body).toMatch(/^v2\.k2\./);
    expect(run.stdout + run.stderr).not.toContain("token=secret");

    // Now k2 alone (no legacy key, no k1) opens them, in their own contexts: the old keys can be dropped.
    const onlyK2 = createSecretSealer(undefined, [K2]);
    expect(onlyK2.unseal(await dkimOf(), `sending_domain:${companyId}:${domainName}`)).toMatch(/BEGIN PRIVATE KEY/);
    expect(onlyK2.unseal((await sealedOf(endpointId)).current, `webhook-endpoint:${companyId}:${endpointId}`)).toBe(created.secret);
    // And the service still signs with the same secret: its deliveries verify.
    await publishOrder(companyId);
    const [request] = await hooks.waitOn("/retire", 1, 60_000);
    expect(request && verifies(request, created.secret)).toBe(true);
  }, 180_000);

  it("rotating the API key pepper keeps cursors, sign-up pages and confirmation links; rotating their keys keeps API keys", async () => {
    const shop: ReadySender = await h.readySender({ credits: 10, scopes: ALL_SCOPES });
    const page = (app: App, cursor: string | undefined, secret: string): Promise<Response> =>
      fetch(new URL(`/mail/v1/webhooks/deliveries?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, app.httpUrl), bearer(secret));
    // Two deliveries, so the first page of one has a cursor.
    await h.forCompany(WebhooksService, shop.companyId).createWebhookEndpoint({ url: hooks.urlFor("/shop"), events: ["order.paid"] });
    await publishOrder(shop.companyId);
    await publishOrder(shop.companyId);
    await hooks.waitOn("/shop", 2, 30_000);
    const first = await page(h.app, undefined, shop.secret);
    expect(first.status).toBe(200);
    const cursor = ((await first.json()) as { nextCursor?: string }).nextCursor;
    expect(cursor).toBeTruthy();

    // A sign-up page served now, and a confirmation link emailed now.
    const form = await createDoubleOptInForm(h, shop.companyId);
    const formPage = async (): Promise<{ token: string; cookie: string }> => {
      // The form's path on the first process (PUBLIC_BASE_URL is not where the test's listener is).
      const response = await fetch(new URL(new URL(form.url).pathname, h.app.httpUrl));
      const token = /name="_token" value="([^"]+)"/.exec(await response.text())?.[1];
      if (!token) throw new Error("no token on the hosted page");
      const cookie = response.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
      return { token, cookie };
    };
    const submit = (app: App, served: { token: string; cookie: string }, email: string): Promise<Response> =>
      fetch(new URL(new URL(form.url).pathname, app.httpUrl), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...(served.cookie ? { cookie: served.cookie } : {}) },
        body: new URLSearchParams({ _token: served.token, _website: "", email }).toString(),
      });
    const signedUp = await submit(h.app, await formPage(), "ada@example.com");
    expect(signedUp.status).toBe(200);
    const mail = await waitForConfirmationMail(h, shop.companyId, "ada@example.com", shop.secret);
    const confirmPage = (app: App): Promise<Response> => fetch(new URL(new URL(mail.link).pathname + new URL(mail.link).search, app.httpUrl));
    expect((await confirmPage(h.app)).status).toBe(200);

    // The pepper rotated (every API key must be made again); nothing else changed.
    const pepperRotated = await otherProcess(secretsFrom({ API_KEY_PEPPER: "rotated-api-key-pepper-0123456789abcdef" }));
    expect((await page(pepperRotated.app, undefined, shop.secret)).status).toBe(401);
    const newKey = await pepperRotated.forCompany(ApiKeysService, shop.companyId).createApiKey({ name: "after rotation", scopes: ALL_SCOPES });
    const next = await page(pepperRotated.app, cursor, newKey.secret);
    expect(next.status).toBe(200);
    expect(((await next.json()) as { items: unknown[] }).items).toHaveLength(1);
    const accepted = await submit(pepperRotated.app, await formPage(), "bob@example.com");
    expect(accepted.status).toBe(200);
    expect(await accepted.text()).not.toContain("expired");
    const stillValid = await confirmPage(pepperRotated.app);
    expect(stillValid.status).toBe(200);
    expect(await stillValid.text()).not.toContain("not valid");

    // The cursor, form-token and confirmation keys rotated; the pepper did not.
    const tokensRotated = await otherProcess(
      secretsFrom({
        API_KEY_PEPPER: h.app.config.apiKeyPepper,
        CURSOR_SECRET: "rotated-cursor-secret-0123456789abcdef",
        FORM_TOKEN_SECRET: "rotated-form-token-secret-0123456789abcdef",
        CONFIRMATION_SECRET: "rotated-confirmation-secret-0123456789abcdef",
      }),
    );
    expect((await page(tokensRotated.app, undefined, shop.secret)).status).toBe(200);
    expect((await page(tokensRotated.app, cursor, shop.secret)).status).toBe(400);
    const expired = await submit(tokensRotated.app, await formPage(), "carol@example.com");
    expect(expired.status).toBe(403);
    const invalid = await confirmPage(tokensRotated.app);
    expect(invalid.status).toBe(400);
    expect(await invalid.text()).toContain("This confirmation link is not valid.");
  }, 180_000);
});
