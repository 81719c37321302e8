import { randomUUID } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AuditService } from "../../src/gen/mail/v1/audit_pb.js";
import { DnsRecordState, DomainsService, DomainStatus, SendersService } from "../../src/gen/mail/v1/domains_pb.js";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";
import { startTestDnsServer, type TestDnsServer } from "../support/dns-server.ts";
import { type Browser, newCompany, reasonOf, signedIn } from "./members-support.ts";

/**
 * The company's sending domains and senders over every door: REST and gRPC
 * with API keys, the session door (Connect, as the screen calls it) for each
 * role, and an operator acting for the company. DNS checks run against a
 * local authoritative DNS server. Members read; owners, admins and keys with
 * mail.admin change; every change is audited; another company's ids are 404.
 */

interface RecordJson {
  type: string;
  name: string;
  value: string;
  purpose: string;
  state: string;
  found: string[];
}

interface DomainJson {
  id: string;
  domain: string;
  returnPathDomain: string;
  dkimSelector: string;
  status: string;
  verificationOverridden: boolean;
  records: RecordJson[];
  lastCheckedAt: string | null;
  verifiedAt: string | null;
  createdAt: string;
}

interface SenderJson {
  id: string;
  domainId: string;
  email: string;
  name: string | null;
  isDefault: boolean;
  verified: boolean;
}

interface ErrorJson {
  error: { code: string; message: string };
}

/** Publishes a domain's records as asked, but `skip`. */
function publish(dns: TestDnsServer, domain: DomainJson, skip: readonly string[] = []): void {
  for (const record of domain.records) {
    if (skip.includes(record.purpose)) continue;
    if (record.type === "txt") dns.addTxt(record.name, record.value);
    if (record.type === "mx") {
      const [priority, host] = record.value.split(" ");
      dns.addMx(record.name, host ?? "", Number(priority));
    }
  }
}

describe("the company's sending domains and senders (DomainsService /mail/v1/domains, SendersService /mail/v1/senders)", () => {
  let h: ApiHarness;
  let dns: TestDnsServer;
  let companyId: string;
  let admin: { secret: string };
  let reader: { secret: string };
  let owner: Browser;
  let adminMember: Browser;
  let member: Browser;
  let other: { companyId: string; secret: string };

  const json = (secret: string, method: string, body?: unknown, extra: Record<string, string> = {}): RequestInit => ({
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...extra },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const grpcDomains = () => createClient(DomainsService, createGrpcTransport({ baseUrl: h.app.grpcUrl }));
  const grpcSenders = () => createClient(SendersService, createGrpcTransport({ baseUrl: h.app.grpcUrl }));
  const auth = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } });

  async function createDomain(name: string, secret = admin.secret): Promise<DomainJson> {
    const response = await h.fetch("/mail/v1/domains", json(secret, "POST", { domain: name }));
    expect(response.status).toBe(201);
    return ((await response.json()) as { domain: DomainJson }).domain;
  }

  async function check(id: string, secret = admin.secret): Promise<DomainJson> {
    const response = await h.fetch(`/mail/v1/domains/${id}/check`, json(secret, "POST"));
    expect(response.status).toBe(200);
    return ((await response.json()) as { domain: DomainJson }).domain;
  }

  beforeAll(async () => {
    dns = await startTestDnsServer();
    h = await startApiHarness({ trustProxy: true, dnsServers: [dns.address], spfInclude: "spf.mail.test", returnPathMxHost: "feedback.mail.test" });
    companyId = await newCompany(h, "Domains Co");
    admin = await h.newKey(companyId, ["mail.admin", "mail.events.read"], "admin key");
    reader = await h.newKey(companyId, ["mail.events.read"], "reader key");
    owner = await signedIn(h, companyId, "owner@domains.example", "owner");
    adminMember = await signedIn(h, companyId, "admin@domains.example", "admin");
    member = await signedIn(h, companyId, "member@domains.example", "member");
    const created = await h.newCompanyWithKey(["mail.admin", "mail.events.read"], "Other Co");
    other = { companyId: created.companyId, secret: created.secret };
  });
  afterAll(async () => {
    await h?.close();
    await dns?.close();
  });
  beforeEach(() => dns.clear());

  it("adds a domain (201) answering the records to publish with their exact names and values; a replayed Idempotency-Key answers the first answer", async () => {
    const first = await h.fetch("/mail/v1/domains", json(admin.secret, "POST", { domain: "Shop.Example." }, { "idempotency-key": "add-shop-1" }));
    expect(first.status).toBe(201);
    const { domain } = (await first.json()) as { domain: DomainJson };
    expect(domain).toEqual({
      id: expect.any(String),
      domain: "shop.example",
      returnPathDomain: "bounces.shop.example",
      dkimSelector: expect.any(String),
      status: "pending",
      verificationOverridden: false,
      records: [
        { type: "txt", name: `${domain.dkimSelector}._domainkey.shop.example`, value: expect.stringMatching(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/), purpose: "dkim", state: "unchecked", found: [] },
        { type: "txt", name: "bounces.shop.example", value: "v=spf1 include:spf.mail.test -all", purpose: "spf", state: "unchecked", found: [] },
        { type: "mx", name: "bounces.shop.example", value: "10 feedback.mail.test", purpose: "return_path", state: "unchecked", found: [] },
        { type: "txt", name: "_dmarc.shop.example", value: "v=DMARC1; p=none", purpose: "dmarc", state: "unchecked", found: [] },
      ],
      lastCheckedAt: null,
      verifiedAt: null,
      createdAt: expect.stringMatching(/Z$/),
    });

    const replay = await h.fetch("/mail/v1/domains", json(admin.secret, "POST", { domain: "Shop.Example." }, { "idempotency-key": "add-shop-1" }));
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual({ domain });

    // Without the key, the same domain again is a duplicate, naming the field.
    const again = await h.fetch("/mail/v1/domains", json(admin.secret, "POST", { domain: "shop.example" }));
    expect(again.status).toBe(400);
    expect(((await again.json()) as ErrorJson).error).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringMatching(/^domain: shop\.example is already/) });

    // Every member reads it, over every door.
    expect(((await (await h.fetch(`/mail/v1/domains/${domain.id}`, bearer(reader.secret))).json()) as { domain: DomainJson }).domain).toEqual(domain);
    const bySession = await member.call("mail.v1.DomainsService", "ListDomains", {});
    expect(bySession.status).toBe(200);
    expect((bySession.body.items as DomainJson[]).map((d) => d.domain)).toContain("shop.example");
    const byGrpc = await grpcDomains().getDomain({ id: domain.id }, auth(reader.secret));
    expect(byGrpc.domain?.status).toBe(DomainStatus.PENDING);
  });

  it("check now answers each record found and correct, missing or wrong, with what DNS returned; the status and check time follow", async () => {
    const domain = await createDomain("check.example");

    // Nothing published.
    const nothing = await check(domain.id);
    expect(nothing.status).toBe("pending");
    expect(nothing.lastCheckedAt).toMatch(/Z$/);
    expect(nothing.records.map((r) => [r.purpose, r.state, r.found])).toEqual([
      ["dkim", "missing", []],
      ["spf", "missing", []],
      ["return_path", "missing", []],
      ["dmarc", "missing", []],
    ]);

    // Some right, some wrong.
    publish(dns, domain, ["dkim", "spf", "return_path"]);
    const dkim = domain.records[0];
    dns.addTxt(dkim?.name ?? "", "v=DKIM1; k=rsa; p=AAAAnotourkey");
    dns.addTxt("bounces.check.example", "v=spf1 include:elsewhere.example -all");
    dns.addMx("bounces.check.example", "mx.elsewhere.example", 5);
    const partly = await check(domain.id);
    expect(partly.status).toBe("pending");
    expect(partly.verifiedAt).toBeNull();
    expect(partly.records.map((r) => [r.purpose, r.state, r.found])).toEqual([
      ["dkim", "wrong", ["v=DKIM1; k=rsa; p=AAAAnotourkey"]],
      ["spf", "wrong", ["v=spf1 include:elsewhere.example -all"]],
      ["return_path", "wrong", ["5 mx.elsewhere.example"]],
      ["dmarc", "verified", ["v=DMARC1; p=none"]],
    ]);

    // All published: verified, over gRPC and the session door too.
    dns.clear();
    publish(dns, domain);
    const verified = await check(domain.id);
    expect(verified.status).toBe("verified");
    expect(verified.verifiedAt).toMatch(/Z$/);
    expect(verified.records.every((r) => r.state === "verified")).toBe(true);
    expect(verified.records[2]?.found).toEqual(["10 feedback.mail.test"]);
    const byGrpc = await grpcDomains().checkDomain({ id: domain.id }, auth(admin.secret));
    expect(byGrpc.domain?.records.map((r) => r.state)).toEqual(Array(4).fill(DnsRecordState.VERIFIED));
    const bySession = await adminMember.call("mail.v1.DomainsService", "CheckDomain", { id: domain.id });
    expect(bySession.status).toBe(200);
    expect((bySession.body.domain as { status: string }).status).toBe("DOMAIN_STATUS_VERIFIED");

    // Each check by a caller is in the audit log, with who made it.
    const audit = await owner.call("mail.v1.AuditService", "ListAuditEvents", { action: "sending_domain.verified" });
    const rows = (audit.body.items as Array<{ actor: string; targetId: string }>).filter((row) => row.targetId === domain.id).map((row) => row.actor);
    expect(rows).toEqual(["admin@domains.example", expect.stringMatching(/^tml_/), expect.stringMatching(/^tml_/), expect.stringMatching(/^tml_/), expect.stringMatching(/^tml_/)]);
  });

  it("a verified domain whose DKIM record disappears is degraded and goes on sending; the record back makes it verified again", async () => {
    const domain = await createDomain("degrade.example");
    publish(dns, domain);
    expect((await check(domain.id)).status).toBe("verified");
    const sender = await h.fetch("/mail/v1/senders", json(admin.secret, "POST", { email: "receipts@degrade.example" }));
    const { sender: created } = (await sender.json()) as { sender: SenderJson };

    dns.clear(domain.records[0]?.name);
    const degraded = await check(domain.id);
    expect(degraded.status).toBe("degraded");
    expect(degraded.records.map((r) => [r.purpose, r.state])).toEqual([
      ["dkim", "missing"],
      ["spf", "verified"],
      ["return_path", "verified"],
      ["dmarc", "verified"],
    ]);
    // Sending goes on: the send path still takes its sender.
    expect((await h.app.sendingSetup.senders.checkSender(companyId, created.id)).email).toBe("receipts@degrade.example");
    const senders = (await (await h.fetch("/mail/v1/senders", bearer(reader.secret))).json()) as { items: SenderJson[] };
    expect(senders.items.find((s) => s.id === created.id)?.verified).toBe(true);

    dns.clear();
    publish(dns, domain);
    expect((await check(domain.id)).status).toBe("verified");
  });

  it("DNS that cannot answer changes nothing: 503 SERVICE_UNAVAILABLE", async () => {
    const domain = await createDomain("servfail.example");
    dns.failName("_dmarc.servfail.example");
    const response = await h.fetch(`/mail/v1/domains/${domain.id}/check`, json(admin.secret, "POST"));
    expect(response.status).toBe(503);
    expect(((await response.json()) as ErrorJson).error.code).toBe("SERVICE_UNAVAILABLE");
    const after = ((await (await h.fetch(`/mail/v1/domains/${domain.id}`, bearer(reader.secret))).json()) as { domain: DomainJson }).domain;
    expect(after.lastCheckedAt).toBeNull();
  });

  it("senders: add (the first is the default), set the default, remove; the default goes last; a domain with senders is not deleted", async () => {
    // A company of its own: which sender is the default is the company's, whatever the other tests made.
    const fresh = await h.newCompanyWithKey(["mail.admin", "mail.events.read"], "Senders Co");
    const domain = await createDomain("senders.example", fresh.secret);
    const add = async (body: unknown) => {
      const response = await h.fetch("/mail/v1/senders", json(fresh.secret, "POST", body));
      expect(response.status).toBe(201);
      return ((await response.json()) as { sender: SenderJson }).sender;
    };
    const first = await add({ email: "hello@Senders.Example", name: "Hello" });
    expect(first).toMatchObject({ domainId: domain.id, email: "hello@senders.example", name: "Hello", isDefault: true, verified: false });
    const second = await add({ email: "news@senders.example" });
    expect(second).toMatchObject({ isDefault: false, name: null });

    // By gRPC and REST.
    const switched = await grpcSenders().setDefaultSender({ id: second.id }, auth(fresh.secret));
    expect(switched.sender?.isDefault).toBe(true);
    const back = await h.fetch(`/mail/v1/senders/${first.id}/make-default`, json(fresh.secret, "POST"));
    expect(back.status).toBe(200);
    const listed = ((await (await h.fetch("/mail/v1/senders", bearer(fresh.secret))).json()) as { items: SenderJson[] }).items;
    expect(listed.map((s) => [s.email, s.isDefault])).toEqual([
      ["hello@senders.example", true],
      ["news@senders.example", false],
    ]);

    // The domain still has senders.
    const busy = await h.fetch(`/mail/v1/domains/${domain.id}`, json(fresh.secret, "DELETE"));
    expect(busy.status).toBe(400);
    expect(((await busy.json()) as ErrorJson).error.message).toMatch(/^id: senders\.example still has senders/);

    // The default, while another sender exists, is refused naming the field.
    const refused = await h.fetch(`/mail/v1/senders/${first.id}`, json(fresh.secret, "DELETE"));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as ErrorJson).error.message).toMatch(/^id: hello@senders\.example is the default sender/);
    const removed = await h.fetch(`/mail/v1/senders/${second.id}`, json(fresh.secret, "DELETE"));
    expect(removed.status).toBe(200);
    expect(await removed.json()).toEqual({ id: second.id });
    // Now the last one, default or not.
    expect((await grpcSenders().deleteSender({ id: first.id }, auth(fresh.secret))).id).toBe(first.id);
    expect((await h.fetch(`/mail/v1/senders/${first.id}`, json(fresh.secret, "DELETE"))).status).toBe(404);

    const deleted = await h.fetch(`/mail/v1/domains/${domain.id}`, json(fresh.secret, "DELETE"));
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ id: domain.id });
    expect((await h.fetch(`/mail/v1/domains/${domain.id}`, bearer(fresh.secret))).status).toBe(404);

    const audit = await h.forCompany(AuditService, fresh.companyId).listAuditEvents({});
    const actions = audit.items
      .filter((row) => [domain.id, first.id, second.id].includes(row.targetId))
      .map((row) => [row.action, row.targetId]);
    expect(actions).toEqual([
      ["sending_domain.deleted", domain.id],
      ["sender.removed", first.id],
      ["sender.removed", second.id],
      ["sender.made_default", first.id],
      ["sender.made_default", second.id],
      ["sender.created", second.id],
      ["sender.created", first.id],
      ["sending_domain.created", domain.id],
    ]);
  });

  it("an operator acting for the company uses the same services", async () => {
    const domains = h.forCompany(DomainsService, companyId);
    const { domain } = await domains.createDomain({ domain: "operator.example" });
    expect(domain?.status).toBe(DomainStatus.PENDING);
    const { sender } = await h.forCompany(SendersService, companyId).createSender({ email: "ops@operator.example" });
    expect(sender?.domainId).toBe(domain?.id);
    expect((await domains.listDomains({})).items.map((d) => d.domain)).toContain("operator.example");
  });

  it("a member reads but changes nothing; a key without mail.admin is refused (403)", async () => {
    const domain = await createDomain("roles.example");
    const { sender } = (await (await h.fetch("/mail/v1/senders", json(admin.secret, "POST", { email: "a@roles.example" }))).json()) as { sender: SenderJson };
    for (const [service, method, body] of [
      ["DomainsService", "CreateDomain", { domain: "mine.example" }],
      ["DomainsService", "CheckDomain", { id: domain.id }],
      ["DomainsService", "DeleteDomain", { id: domain.id }],
      ["SendersService", "CreateSender", { email: "b@roles.example" }],
      ["SendersService", "SetDefaultSender", { id: sender.id }],
      ["SendersService", "DeleteSender", { id: sender.id }],
    ] as const) {
      const answer = await member.call(`mail.v1.${service}`, method, body);
      expect(answer.status, method).toBe(403);
      expect(reasonOf(answer)).toBe("FORBIDDEN");
    }
    expect((await member.call("mail.v1.DomainsService", "GetDomain", { id: domain.id })).status).toBe(200);
    expect((await member.call("mail.v1.SendersService", "ListSenders", {})).status).toBe(200);
    for (const [path, method] of [
      ["/mail/v1/domains", "POST"],
      [`/mail/v1/domains/${domain.id}/check`, "POST"],
      [`/mail/v1/domains/${domain.id}`, "DELETE"],
      ["/mail/v1/senders", "POST"],
      [`/mail/v1/senders/${sender.id}/make-default`, "POST"],
      [`/mail/v1/senders/${sender.id}`, "DELETE"],
    ] as const) {
      const response = await h.fetch(path, json(reader.secret, method, method === "POST" && !path.includes(domain.id) && !path.includes(sender.id) ? { domain: "x.example", email: "x@roles.example" } : undefined));
      expect(response.status, `${method} ${path}`).toBe(403);
    }
    const byGrpc = await grpcDomains()
      .deleteDomain({ id: domain.id }, auth(reader.secret))
      .catch((e: unknown) => e);
    expect((byGrpc as ConnectError).code).toBe(Code.PermissionDenied);
  });

  it("another company's ids answer 404 over REST, gRPC and the session door, and stay as they were", async () => {
    const theirs = ((await (await h.fetch("/mail/v1/domains", json(other.secret, "POST", { domain: "theirs.example" }))).json()) as { domain: DomainJson }).domain;
    const { sender: theirSender } = (await (await h.fetch("/mail/v1/senders", json(other.secret, "POST", { email: "a@theirs.example" }))).json()) as { sender: SenderJson };
    for (const [path, method] of [
      [`/mail/v1/domains/${theirs.id}`, "GET"],
      [`/mail/v1/domains/${theirs.id}/check`, "POST"],
      [`/mail/v1/domains/${theirs.id}`, "DELETE"],
      [`/mail/v1/senders/${theirSender.id}/make-default`, "POST"],
      [`/mail/v1/senders/${theirSender.id}`, "DELETE"],
      [`/mail/v1/domains/${randomUUID()}`, "GET"],
      ["/mail/v1/domains/not-a-uuid", "GET"],
    ] as const) {
      const response = await h.fetch(path, json(admin.secret, method));
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(((await response.json()) as ErrorJson).error.code).toBe("NOT_FOUND");
    }
    // A sender on their domain name is not ours to add.
    const foreignSender = await h.fetch("/mail/v1/senders", json(admin.secret, "POST", { email: "b@theirs.example" }));
    expect(foreignSender.status).toBe(404);
    const byGrpc = await grpcDomains()
      .checkDomain({ id: theirs.id }, auth(admin.secret))
      .catch((e: unknown) => e);
    expect((byGrpc as ConnectError).code).toBe(Code.NotFound);
    const bySession = await owner.call("mail.v1.SendersService", "DeleteSender", { id: theirSender.id });
    expect(bySession.status).toBe(404);
    expect(reasonOf(bySession)).toBe("NOT_FOUND");
    const list = (await (await h.fetch("/mail/v1/domains", bearer(reader.secret))).json()) as { items: DomainJson[] };
    expect(list.items.map((d) => d.domain)).not.toContain("theirs.example");
    const still = (await (await h.fetch("/mail/v1/senders", bearer(other.secret))).json()) as { items: SenderJson[] };
    expect(still.items.map((s) => [s.id, s.isDefault])).toEqual([[theirSender.id, true]]);
  });

  it("bad input answers 400 VALIDATION_ERROR naming the field, on every door", async () => {
    const cases: Array<[string, RequestInit, string]> = [
      ["/mail/v1/domains", json(admin.secret, "POST", { domain: "not a domain" }), "domain"],
      ["/mail/v1/domains", json(admin.secret, "POST", { domain: "localhost" }), "domain"],
      ["/mail/v1/domains", json(admin.secret, "POST", {}), "domain"],
      ["/mail/v1/domains", json(admin.secret, "POST", { domain: `${"a".repeat(250)}.example` }), "domain"],
      ["/mail/v1/domains", json(admin.secret, "POST", { domain: "ok.example", verified: true }), "verified"],
      ["/mail/v1/senders", json(admin.secret, "POST", { email: "not-an-address" }), "email"],
      ["/mail/v1/senders", json(admin.secret, "POST", {}), "email"],
      ["/mail/v1/senders", json(admin.secret, "POST", { email: "a@shop.example", name: "x".repeat(201) }), "name"],
      ["/mail/v1/senders", json(admin.secret, "POST", { email: "a@shop.example", name: "Two\nlines" }), "name"],
      [`/mail/v1/domains/${"x".repeat(65)}`, bearer(reader.secret), "id"],
    ];
    for (const [url, init, field] of cases) {
      const response = await h.fetch(url, init);
      const body = (await response.json()) as ErrorJson;
      expect(response.status, `${init.method ?? "GET"} ${url} ${String(init.body)}`).toBe(400);
      expect(body.error.code).toBe("VALIDATION_ERROR");
      expect(body.error.message, url).toMatch(new RegExp(`\\b${field}\\b`));
    }
    const session = await adminMember.call("mail.v1.DomainsService", "CreateDomain", { domain: "nope" });
    expect(session.status).toBe(400);
    expect(String(session.body.message)).toMatch(/^domain: /);
    const byGrpc = await grpcSenders()
      .createSender({ email: "nope" }, auth(admin.secret))
      .catch((e: unknown) => e);
    expect((byGrpc as ConnectError).code).toBe(Code.InvalidArgument);
    expect((byGrpc as ConnectError).rawMessage).toMatch(/^email: /);
  });
});
