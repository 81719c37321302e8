import { randomUUID } from "node:crypto";
import nodemailer from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresTrackingStore } from "../../src/adapters/postgres/tracking/index.ts";
import { type DecoratedCampaignMessage, linkIdOf, Tracking, TrackingTokens } from "../../src/capabilities/tracking/index.ts";
import { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type DeliveryBody, loopbackDelivery, type RoutedReceiver, startRoutedReceiver, verifiedBody, waitUntil } from "../webhooks/api-support.ts";
import { deliveryReportsConfig } from "../delivery-loop/harness.ts";

/**
 * Campaign tracking and unsubscribe, black box: copies decorated by the
 * Tracking capability the campaigns capability calls, then the tracking
 * addresses over real HTTP (as a reader's browser, a link scanner and a
 * mailbox provider use them), the events counted at a real HTTPS webhook
 * receiver, mail to the List-Unsubscribe mailto through the real inbound
 * SMTP listener, and the conversions' attribution to the last verified click.
 */
const HUMAN = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15";
const TRACKED = ["opened", "clicked", "campaign.click", "unsubscribed", "contact.updated"];

let h: SendingHarness;
let hooks: RoutedReceiver;
let shop: ReadySender;
let hookSecret: string;
/** Decorates as the app's own Tracking would, two minutes ago: the copy was handed over long enough ago for a person to click. */
let earlier: Tracking;

beforeAll(async () => {
  hooks = await startRoutedReceiver();
  h = await startSendingHarness({ deliveryReports: deliveryReportsConfig(0) }, undefined, { webhookDelivery: loopbackDelivery(hooks.certificate) });
  shop = await h.readySender({ credits: 10, scopes: ["mail.transactional.send", "mail.events.read", "mail.contacts.write", "mail.contacts.read", "mail.conversions.write", "mail.admin"] });
  const created = await h.forCompany(WebhooksService, shop.companyId).createWebhookEndpoint({ url: hooks.urlFor("/t"), events: TRACKED });
  hookSecret = created.secret;
  const app = h.app;
  earlier = new Tracking({
    store: new PostgresTrackingStore(app.orm),
    publisher: app.webhooks.publisher,
    clicks: app.conversions,
    contacts: app.contacts.contacts,
    rateLimiter: app.rateLimiter,
    secret: app.config.confirmationSecret,
    baseUrl: "https://track.shop.test",
    mailtoDomain: app.config.returnPathMxHost,
    clock: () => new Date(Date.now() - 120_000),
  });
}, 240_000);
afterAll(async () => {
  await h?.close();
  await hooks?.close();
});

function api(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(new URL(path, h.app.httpUrl), {
    method,
    headers: { authorization: `Bearer ${shop.secret}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function newContact(language?: string): Promise<{ id: string; email: string }> {
  const email = `reader-${randomUUID()}@customer.test`;
  const response = await api("POST", "/mail/v1/contacts", { email, consent: { source: "test" }, ...(language ? { locale: language } : {}) });
  expect(response.status).toBe(200);
  return { id: ((await response.json()) as { id: string }).id, email };
}

async function newList(): Promise<string> {
  const response = await api("POST", "/mail/v1/lists", { name: `List ${randomUUID()}` });
  expect(response.status).toBe(201);
  return ((await response.json()) as { list: { id: string } }).list.id;
}

interface Copy {
  readonly campaignId: string;
  readonly recipientId: string;
  readonly contactId: string;
  readonly email: string;
  readonly message: DecoratedCampaignMessage;
}

const HTML = `<html><body><h1>Spring sale</h1>
<p><a href="https://shop.example/sale?utm=mail&amp;x=1">Shop the sale</a> or <a href='https://shop.example/new'>new in</a>.</p>
<p><a href="mailto:help@shop.example">Write to us</a> <a href="#top">top</a></p>
</body></html>`;
const TEXT = "Spring sale: https://shop.example/sale?utm=mail&x=1.\nNew in: https://shop.example/new\n";

async function copy(options: { tracking?: Tracking; campaignId?: string; trackOpens?: boolean; trackClicks?: boolean; language?: string } = {}): Promise<Copy> {
  const contact = await newContact(options.language);
  const campaignId = options.campaignId ?? randomUUID();
  const recipientId = randomUUID();
  const message = await (options.tracking ?? earlier).decorate({
    companyId: shop.companyId,
    campaignId,
    recipientId,
    contactId: contact.id,
    email: contact.email,
    html: HTML,
    text: TEXT,
    trackOpens: options.trackOpens ?? true,
    trackClicks: options.trackClicks ?? true,
    language: options.language,
  });
  return { campaignId, recipientId, contactId: contact.id, email: contact.email, message };
}

/** The path of each tracked address of a kind in the copy's HTML, in order. */
function paths(message: DecoratedCampaignMessage, kind: "t/c" | "t/o" | "u"): string[] {
  return [...message.html.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1] ?? "").filter((u) => u.includes(`/${kind}/`)).map((u) => new URL(u.replaceAll("&#38;", "&")).pathname);
}

function get(path: string, headers: Record<string, string> = {}, method = "GET"): Promise<Response> {
  return fetch(new URL(path, h.app.httpUrl), { method, redirect: "manual", headers: { "user-agent": HUMAN, ...headers } });
}

function events(recipientId: string, event?: string): DeliveryBody[] {
  return hooks
    .on("/t")
    .map((r) => verifiedBody(r, hookSecret))
    .filter((b) => b.data.recipientId === recipientId && (event === undefined || b.event === event));
}

function eventsOf(kind: string, where: (b: DeliveryBody) => boolean): DeliveryBody[] {
  return hooks.on("/t").map((r) => verifiedBody(r, hookSecret)).filter((b) => b.event === kind && where(b));
}

async function waitForEvents(recipientId: string, event: string, count: number): Promise<DeliveryBody[]> {
  return waitUntil(async () => {
    const found = events(recipientId, event);
    return found.length >= count ? found : undefined;
  }, `${count} ${event} of ${recipientId}`);
}

async function contactStatus(id: string): Promise<string> {
  const response = await api("GET", `/mail/v1/contacts/${id}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { status: string }).status;
}

describe("the decorator", () => {
  it("rewrites http(s) links of both parts to signed tracked addresses, adds the pixel, the honeypot, the footer and the RFC 8058 headers", async () => {
    const c = await copy();
    const { html, text, headers } = c.message;
    expect(html).not.toContain("shop.example/sale");
    expect(html).not.toContain("shop.example/new");
    expect(text).not.toContain("shop.example");
    // Other schemes and anchors are left alone.
    expect(html).toContain('href="mailto:help@shop.example"');
    expect(html).toContain('href="#top"');
    // Two links, the honeypot, the footer link, the pixel; the footer and pixel come before </body>.
    const clicks = paths(c.message, "t/c");
    expect(clicks).toHaveLength(3);
    expect(new Set(clicks).size).toBe(3);
    expect(paths(c.message, "t/o")).toHaveLength(1);
    expect(paths(c.message, "u")).toHaveLength(1);
    expect(html).toMatch(/aria-hidden="true" tabindex="-1"><\/a>/);
    expect(html.indexOf("/t/o/")).toBeLessThan(html.indexOf("</body>"));
    expect(html).toContain("Unsubscribe</a>");
    expect(text).toMatch(/https:\/\/track\.shop\.test\/t\/c\/[A-Za-z0-9_-]{62}\./);
    expect(text).toMatch(/Unsubscribe: https:\/\/track\.shop\.test\/u\/[A-Za-z0-9_-]{62}\n$/);
    expect(headers["List-Unsubscribe"]).toMatch(
      /^<https:\/\/track\.shop\.test\/u\/[A-Za-z0-9_-]{62}>, <mailto:unsubscribe\+[0-9a-f]{48}@feedback\.mail\.local\?subject=unsubscribe>$/,
    );
    expect(headers["List-Unsubscribe-Post"]).toBe("List-Unsubscribe=One-Click");
  });

  it("without tracking keeps the links and adds no pixel, but always the footer and the headers", async () => {
    const c = await copy({ trackOpens: false, trackClicks: false, language: "de" });
    expect(c.message.html).toContain('href="https://shop.example/sale?utm=mail&amp;x=1"');
    expect(c.message.text).toContain("https://shop.example/new");
    expect(paths(c.message, "t/c")).toEqual([]);
    expect(paths(c.message, "t/o")).toEqual([]);
    expect(c.message.html).toContain("Abmelden</a>");
    expect(c.message.headers["List-Unsubscribe-Post"]).toBe("List-Unsubscribe=One-Click");
  });
});

describe("clicks", () => {
  it("redirect to the campaign's own URL; every click publishes campaign.click, the first verified one per link `clicked`", async () => {
    const c = await copy();
    const [sale, news] = paths(c.message, "t/c");
    const first = await get(sale as string);
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toBe("https://shop.example/sale?utm=mail&x=1");
    // A query added to the address changes nothing: never an open redirect.
    const again = await get(`${sale}?url=https://evil.example/`);
    expect(again.headers.get("location")).toBe("https://shop.example/sale?utm=mail&x=1");
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await get(news as string)).headers.get("location")).toBe("https://shop.example/new");

    const clicks = await waitForEvents(c.recipientId, "campaign.click", 3);
    const clicked = await waitForEvents(c.recipientId, "clicked", 2);
    expect(clicks.map((b) => b.data.suspect)).toEqual([false, false, false]);
    expect(clicked.map((b) => b.data.linkId).sort()).toEqual([linkIdOf("https://shop.example/new"), linkIdOf("https://shop.example/sale?utm=mail&x=1")].sort());
    expect(clicked[0]?.data).toMatchObject({ campaignId: c.campaignId, recipientId: c.recipientId, contactId: c.contactId, email: c.email });
    expect(await earlier.countsFor({ companyId: shop.companyId, campaignId: c.campaignId })).toMatchObject({ clicks: 3, suspectClicks: 0, uniqueClicks: 1 });
    const perLink = await earlier.clicksPerLink({ companyId: shop.companyId, campaignId: c.campaignId });
    expect(perLink.map((l) => [l.url, l.clicks, l.uniqueClicks])).toEqual([
      ["https://shop.example/sale?utm=mail&x=1", 2, 1],
      ["https://shop.example/new", 1, 1],
    ]);
    // Still one `clicked` per link after the last delivery settled.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(events(c.recipientId, "clicked")).toHaveLength(2);
  });

  it("a broken, tampered, foreign or wrong-kind token answers a 404 page, never a 500 nor a redirect", async () => {
    const c = await copy();
    const [sale] = paths(c.message, "t/c") as [string];
    const token = sale.split("/").pop() as string;
    const flipped = `${token.slice(0, 20)}${token[20] === "A" ? "B" : "A"}${token.slice(21)}`;
    const [pixel] = paths(c.message, "t/o") as [string];
    const openToken = pixel.split("/").pop() as string;
    // A genuine token for a URL the campaign never had: the MAC is right, the link is not the campaign's.
    const foreignLink = new TrackingTokens(h.app.config.confirmationSecret).issue(
      "click",
      { companyId: shop.companyId, campaignId: c.campaignId, recipientId: c.recipientId, contactId: c.contactId },
      new Date(Date.now() - 60_000),
      linkIdOf("https://evil.example/"),
    );
    // A path the HTTP layer cannot decode is refused before any token is read: 400, never a 500.
    expect((await get("/t/c/%00%ff")).status).toBe(400);
    for (const bad of [flipped, token.slice(0, 40), `${token}A`, "not-a-token", "%00", openToken, foreignLink, "A".repeat(62)]) {
      const response = await get(`/t/c/${bad}`);
      expect(response.status, bad).toBe(404);
      expect(response.headers.get("location")).toBeNull();
      expect(response.headers.get("content-type")).toContain("text/html");
      expect(await response.text()).toContain("This link is not valid");
    }
    // The pixel answers its image whatever the token.
    const gif = await get(`/t/o/${flipped}`);
    expect([gif.status, gif.headers.get("content-type")]).toEqual([200, "image/gif"]);
    expect((await get(`/u/${flipped}`)).status).toBe(404);
    expect(events(c.recipientId)).toEqual([]);
  });

  it("an expired token still opens the campaign's page but counts nothing", async () => {
    const old = new Tracking({ ...trackingParts(), clock: () => new Date(Date.now() - 400 * 24 * 60 * 60_000) });
    const c = await copy({ tracking: old });
    const [sale] = paths(c.message, "t/c") as [string];
    const response = await get(sale);
    expect([response.status, response.headers.get("location")]).toEqual([302, "https://shop.example/sale?utm=mail&x=1"]);
    await get(paths(c.message, "t/o")[0] as string);
    expect(await earlier.countsFor({ companyId: shop.companyId, campaignId: c.campaignId })).toMatchObject({ clicks: 0, opens: 0 });
  });
});

function trackingParts() {
  const app = h.app;
  return {
    store: new PostgresTrackingStore(app.orm),
    publisher: app.webhooks.publisher,
    clicks: app.conversions,
    contacts: app.contacts.contacts,
    rateLimiter: app.rateLimiter,
    secret: app.config.confirmationSecret,
    baseUrl: "https://track.shop.test",
    mailtoDomain: app.config.returnPathMxHost,
  };
}

describe("the anonymous door's budget", () => {
  it("counts every request of a client address, whatever the token, and refuses past the budget with retry-after", async () => {
    const small = new Tracking({ ...trackingParts(), perClientPerMinute: 3 });
    const c = await copy({ tracking: small });
    const token = (paths(c.message, "t/c")[0] as string).split("/").pop() as string;
    const request = { method: "GET", userAgent: HUMAN, purpose: undefined, secPurpose: undefined, xMoz: undefined, clientIp: `198.51.100.${Math.floor(Math.random() * 200)}`, at: new Date() };
    const outcomes = [];
    for (const t of [token, "garbage", token, token]) outcomes.push(await small.click({ token: t, request }));
    expect(outcomes.map((o) => o.kind)).toEqual(["redirect", "not-found", "redirect", "rate-limited"]);
    expect(outcomes[3]).toMatchObject({ retryAfterSeconds: expect.any(Number) });
    // Another address has its own budget.
    expect((await small.click({ token, request: { ...request, clientIp: "203.0.113.250" } })).kind).toBe("redirect");
  });
});

describe("the suspect rules, each on its own", () => {
  async function suspectOf(c: Copy): Promise<boolean[]> {
    return (await waitForEvents(c.recipientId, "campaign.click", 1)).map((b) => b.data.suspect as boolean);
  }

  it("early: a click within seconds of the handoff (the app's own decorator, clicked at once)", async () => {
    const c = await copy({ tracking: h.app.tracking });
    expect((await get(paths(c.message, "t/c")[0] as string)).status).toBe(302);
    expect(await suspectOf(c)).toEqual([true]);
  });

  it("HEAD, prefetch and prerender requests", async () => {
    for (const [headers, method] of [
      [{}, "HEAD"],
      [{ "sec-purpose": "prefetch" }, "GET"],
      [{ purpose: "prefetch" }, "GET"],
      [{ "sec-purpose": "prefetch;prerender" }, "GET"],
    ] as const) {
      const c = await copy();
      expect((await get(paths(c.message, "t/c")[0] as string, headers, method)).status).toBe(302);
      expect(await suspectOf(c), JSON.stringify([headers, method])).toEqual([true]);
    }
  });

  it("known link scanners and no user agent", async () => {
    for (const agent of ["Mozilla/5.0 (compatible; Microsoft Office SafeLinks)", "python-requests/2.31", "Mozilla/5.0 HeadlessChrome/120.0", "Barracuda Sentinel", ""]) {
      const c = await copy();
      await get(paths(c.message, "t/c")[0] as string, { "user-agent": agent });
      expect(await suspectOf(c), agent).toEqual([true]);
    }
  });

  it("a hidden honeypot link followed makes the recipient's clicks of the next minute suspect", async () => {
    const c = await copy();
    const [sale, , honeypot] = paths(c.message, "t/c") as [string, string, string];
    expect((await get(honeypot)).status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await get(sale)).status).toBe(302);
    expect(await suspectOf(c)).toEqual([true]);
  });

  it("several links of the same recipient within the same second", async () => {
    const c = await copy();
    const [sale, news] = paths(c.message, "t/c") as [string, string];
    await get(sale);
    await get(news);
    const clicks = await waitForEvents(c.recipientId, "campaign.click", 2);
    // Deliveries of two events may arrive in either order: each is matched by its link.
    const byLink = new Map(clicks.map((b) => [b.data.linkId, b.data.suspect]));
    expect(byLink).toEqual(
      new Map([
        [linkIdOf("https://shop.example/sale?utm=mail&x=1"), false],
        [linkIdOf("https://shop.example/new"), true],
      ]),
    );
  });

  it("no suspect click publishes `clicked`", async () => {
    const c = await copy();
    await get(paths(c.message, "t/c")[0] as string, { "user-agent": "curl/8.5.0" });
    await waitForEvents(c.recipientId, "campaign.click", 1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(events(c.recipientId, "clicked")).toEqual([]);
  });
});

describe("opens", () => {
  it("the first human open publishes `opened` once; Apple Mail Privacy Protection's fetches are machine opens", async () => {
    const c = await copy();
    const [pixel] = paths(c.message, "t/o") as [string];
    const apple = await get(pixel, { "user-agent": "Mozilla/5.0" });
    expect([apple.status, apple.headers.get("content-type"), apple.headers.get("cache-control")]).toEqual([200, "image/gif", "no-store, private"]);
    expect((await apple.arrayBuffer()).byteLength).toBe(42);
    await get(pixel);
    await get(pixel);
    const opened = await waitForEvents(c.recipientId, "opened", 1);
    expect(opened[0]?.data).toEqual({ campaignId: c.campaignId, recipientId: c.recipientId, contactId: c.contactId, email: c.email, occurredAt: opened[0]?.data.occurredAt });
    expect(await earlier.countsFor({ companyId: shop.companyId, campaignId: c.campaignId })).toMatchObject({ opens: 3, machineOpens: 1, uniqueOpens: 1 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(events(c.recipientId, "opened")).toHaveLength(1);
  });

  it("an open within seconds of the handoff is a machine's: no `opened`", async () => {
    const c = await copy({ tracking: h.app.tracking });
    await get(paths(c.message, "t/o")[0] as string);
    expect(await earlier.countsFor({ companyId: shop.companyId, campaignId: c.campaignId })).toMatchObject({ opens: 1, machineOpens: 1, uniqueOpens: 0 });
  });
});

describe("unsubscribe", () => {
  function unsubscribePath(c: Copy): string {
    return new URL(/<(https:[^>]+)>/.exec(c.message.headers["List-Unsubscribe"] ?? "")?.[1] ?? "").pathname;
  }

  async function afterUnsubscribe(c: Copy): Promise<void> {
    expect(await contactStatus(c.contactId)).toBe("unsubscribed");
    const [event] = await waitForEvents(c.recipientId, "unsubscribed", 1);
    expect(event?.data).toMatchObject({ campaignId: c.campaignId, recipientId: c.recipientId, contactId: c.contactId, email: c.email });
    const updated = await waitUntil(async () => eventsOf("contact.updated", (b) => b.data.contactId === c.contactId && b.data.status === "unsubscribed")[0], "contact.updated");
    expect(updated.data).toMatchObject({ source: "unsubscribe", change: "consent" });
  }

  it("the one-click POST as a mailbox provider sends it unsubscribes at once; transactional mail goes on", async () => {
    const c = await copy();
    // Gmail's request: urlencoded, no cookies, no authorization.
    const response = await fetch(new URL(unsubscribePath(c), h.app.httpUrl), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": "Mozilla/5.0 (compatible; Google-Unsubscribe)" },
      body: "List-Unsubscribe=One-Click",
    });
    expect(response.status).toBe(200);
    await afterUnsubscribe(c);
    const contact = (await (await api("GET", `/mail/v1/contacts/${c.contactId}`)).json()) as { consent: { source: string; reference: string } };
    expect(contact.consent).toMatchObject({ source: "unsubscribe:one-click", reference: `campaign:${c.campaignId}` });
    // Twice: nothing more.
    await fetch(new URL(unsubscribePath(c), h.app.httpUrl), { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "List-Unsubscribe=One-Click" });
    expect(await earlier.countsFor({ companyId: shop.companyId, campaignId: c.campaignId })).toMatchObject({ unsubscribes: 1 });
    // Spec rule 2: an unsubscribe stops marketing mail only.
    const sent = await h.send(shop.secret, { to: c.email, subject: "Your receipt", html: "<p>Thanks</p>" });
    expect(sent.status).toBe(202);
    const { id } = (await sent.json()) as { id: string };
    const message = await h.waitForMessage(shop.secret, id, (m) => m.status !== "queued" && m.status !== "processing" && m.status !== "deferred");
    expect(["sent", "delivered"]).toContain(message.status);
  });

  it("a multipart one-click POST unsubscribes too", async () => {
    const c = await copy();
    const form = new FormData();
    form.set("List-Unsubscribe", "One-Click");
    const response = await fetch(new URL(unsubscribePath(c), h.app.httpUrl), { method: "POST", body: form });
    expect(response.status).toBe(200);
    await afterUnsubscribe(c);
  });

  it("the footer link's page changes nothing until its button is pressed, in the copy's language, under the hosted pages' CSP", async () => {
    const c = await copy({ language: "de" });
    const [footer] = paths(c.message, "u") as [string];
    const page = await get(footer);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
    const body = await page.text();
    expect(body).toContain('<html lang="de">');
    expect(body).toContain('<form method="post">');
    expect(body).toContain("Abmelden</button>");
    await get(footer);
    expect(await contactStatus(c.contactId)).toBe("subscribed");
    const confirmed = await fetch(new URL(footer, h.app.httpUrl), { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "confirm=yes" });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain("Sie sind abgemeldet.");
    await afterUnsubscribe(c);
  });

  it("mail to the List-Unsubscribe mailto, received by the inbound SMTP listener, unsubscribes; a forged address is refused", async () => {
    const c = await copy();
    const mailto = /<mailto:([^?>]+)/.exec(c.message.headers["List-Unsubscribe"] ?? "")?.[1] as string;
    const client = nodemailer.createTransport({ host: "127.0.0.1", port: h.app.inboundSmtpPort, secure: false, ignoreTLS: true });
    try {
      const info = await client.sendMail({ from: c.email, to: mailto, subject: "unsubscribe", text: "" });
      expect(info.response).toMatch(/^250/);
      await afterUnsubscribe(c);
      const forged = `${mailto.slice(0, 30)}${mailto[30] === "0" ? "1" : "0"}${mailto.slice(31)}`;
      await expect(client.sendMail({ from: c.email, to: forged, subject: "unsubscribe", text: "" })).rejects.toMatchObject({ responseCode: 550 });
    } finally {
      client.close();
    }
  });
});

describe("conversions", () => {
  it("are attributed to the last verified click, and the revenue report names the campaign", async () => {
    const c = await copy();
    const [sale] = paths(c.message, "t/c") as [string];
    expect((await get(sale)).status).toBe(302);
    await waitForEvents(c.recipientId, "clicked", 1);
    // A scanner's click afterwards does not take the credit.
    await get(paths(c.message, "t/c")[1] as string, { "user-agent": "python-requests/2.31" });
    await waitForEvents(c.recipientId, "campaign.click", 2);
    const response = await api("POST", "/mail/v1/conversions", { eventId: randomUUID(), eventType: "purchase", contactId: c.contactId, revenue: "42.50", currency: "EUR" });
    expect(response.status).toBe(202);
    const { conversion } = (await response.json()) as { conversion: { campaignId: string | null; linkId: string | null } };
    expect(conversion).toMatchObject({ campaignId: c.campaignId, linkId: linkIdOf("https://shop.example/sale?utm=mail&x=1") });
    const report = (await (await api("GET", "/mail/v1/reports/revenue-by-campaign")).json()) as { campaigns?: { campaignId: string; net: string }[]; rows?: { campaignId: string }[] };
    expect(JSON.stringify(report)).toContain(c.campaignId);
  });

  it("a campaign's results: clicks per link (verified and suspect), opens and clicks over time, the revenue attributed", async () => {
    const created = await api("POST", "/mail/v1/campaigns", { name: "Results", audience: { listIds: [await newList()] }, content: { subject: "Sale", html: HTML, text: TEXT } });
    expect(created.status).toBe(201);
    const campaignId = ((await created.json()) as { campaign: { id: string } }).campaign.id;
    const [reader, other] = [await copy({ campaignId }), await copy({ campaignId })];
    const [sale, fresh] = paths(reader.message, "t/c") as [string, string];
    expect((await get(sale)).status).toBe(302);
    expect((await get(sale)).status).toBe(302);
    expect((await get(paths(other.message, "t/c")[0] as string)).status).toBe(302);
    // A link scanner on the other link: a suspect click, not a verified one.
    expect((await get(fresh, { "user-agent": "python-requests/2.31" })).status).toBe(302);
    expect((await get(paths(reader.message, "t/o")[0] as string)).status).toBe(200);
    await waitForEvents(other.recipientId, "clicked", 1);
    await waitForEvents(reader.recipientId, "opened", 1);
    for (const [revenue, currency] of [["10.25", "EUR"], ["5.00", "EUR"], ["7", "USD"]] as const) {
      const who = currency === "USD" ? other : reader;
      expect((await api("POST", "/mail/v1/conversions", { eventId: randomUUID(), eventType: "purchase", contactId: who.contactId, revenue, currency })).status).toBe(202);
    }

    const response = await api("GET", `/mail/v1/campaigns/${campaignId}/results`);
    expect(response.status).toBe(200);
    const results = (await response.json()) as {
      links: { linkId: string; url: string; clicks: number; clickers: number; suspectClicks: number }[];
      revenue: { currency: string; conversions: string; gross: string; net: string }[];
      interval: string;
      timeline: { start: string; opens: number; clicks: number }[];
    };
    expect(results.links).toEqual([
      { linkId: linkIdOf("https://shop.example/sale?utm=mail&x=1"), url: "https://shop.example/sale?utm=mail&x=1", clicks: 3, clickers: 2, suspectClicks: 0 },
      { linkId: linkIdOf("https://shop.example/new"), url: "https://shop.example/new", clicks: 0, clickers: 0, suspectClicks: 1 },
    ]);
    expect(results.revenue.map((r) => [r.currency, r.conversions, r.gross, r.net])).toEqual([
      ["EUR", "2", "15.25", "15.25"],
      ["USD", "1", "7", "7"],
    ]);
    // Not started: drawn by the hour; the hits were made two minutes ago (the decorator's clock), one bucket or two around an hour's turn.
    expect(results.interval).toBe("hour");
    const totals = results.timeline.reduce((sum, b) => ({ opens: sum.opens + b.opens, clicks: sum.clicks + b.clicks }), { opens: 0, clicks: 0 });
    expect(totals).toEqual({ opens: 1, clicks: 3 });
    for (const bucket of results.timeline) expect(new Date(bucket.start).getUTCMinutes()).toBe(0);

    // Another company reads nothing of it.
    const stranger = await h.readySender({ credits: 1, scopes: ["mail.events.read"] });
    const theirs = await fetch(new URL(`/mail/v1/campaigns/${campaignId}/results`, h.app.httpUrl), { headers: { authorization: `Bearer ${stranger.secret}` } });
    expect(theirs.status).toBe(404);
  });
});
