import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { type ApiHarness, bearer, OPERATOR_TOKEN, startApiHarness } from "../support/api-harness.ts";
import { browserHeaders, newCompany, reasonOf, signedIn } from "./members-support.ts";

/**
 * One principal from one auth step: an API key, a member
 * session, or an operator acting for a named company reach the same company
 * services, which read the company and the scopes and nothing else.
 */
describe("one principal, three ways in", () => {
  let h: ApiHarness;
  let a: string;
  let b: string;
  let listOfB: string;

  beforeAll(async () => {
    h = await startApiHarness({ trustProxy: true });
    a = await newCompany(h, "Company A");
    b = await newCompany(h, "Company B");
    listOfB = (await h.forCompany(ListsService, b).createContactList({ name: "B's list" })).list?.id ?? "";
    await h.forCompany(ListsService, a).createContactList({ name: "A's list" });
  });
  afterAll(async () => h?.close());

  const asOperator = (companyId: string) => ({ headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "x-mail-company-id": companyId } });

  it("a key, a member session and an operator for the company see the same company", async () => {
    const key = await h.newKey(a, ["mail.admin", "mail.events.read"]);
    const viaKey = (await (await h.fetch("/mail/v1/lists", bearer(key.secret))).json()) as { items: { name: string }[] };

    const admin = await signedIn(h, a, "admin@a.example", "admin");
    const viaSession = await admin.call("mail.v1.ListsService", "ListContactLists");
    const account = await admin.call("mail.v1.MailService", "GetAccount");
    expect((account.body.organization as { id: string }).id).toBe(a);
    expect(account.body.key).toBeUndefined();

    const operator = createClient(ListsService, createGrpcTransport({ baseUrl: h.app.operatorUrl }));
    const viaOperator = await operator.listContactLists({}, asOperator(a));

    expect(viaKey.items.map((l) => l.name)).toEqual(["A's list"]);
    expect((viaSession.body.items as { name: string }[]).map((l) => l.name)).toEqual(["A's list"]);
    expect(viaOperator.items.map((l) => l.name)).toEqual(["A's list"]);
  });

  it("an operator acting for company A cannot see or change company B", async () => {
    const operator = createClient(ListsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1" }));
    for (const call of [
      () => operator.renameContactList({ id: listOfB, name: "taken over" }, asOperator(a)),
      () => operator.deleteContactList({ id: listOfB }, asOperator(a)),
    ]) {
      expect(((await call().catch((e: unknown) => e)) as ConnectError).code).toBe(Code.NotFound);
    }
    const listed = await operator.listContactLists({}, asOperator(b));
    expect(listed.items.map((l) => l.name)).toEqual(["B's list"]);
  });

  it("the operator door needs the operator token and a known company", async () => {
    const operator = createClient(MailService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1" }));
    const key = await h.newKey(a, ["mail.events.read"]);
    const cases: [Record<string, string>, Code][] = [
      [{ authorization: `Bearer ${OPERATOR_TOKEN}` }, Code.InvalidArgument],
      [{ authorization: `Bearer ${OPERATOR_TOKEN}`, "x-mail-company-id": "00000000-0000-4000-8000-000000000000" }, Code.NotFound],
      [{ authorization: "Bearer not-the-operator-token", "x-mail-company-id": a }, Code.PermissionDenied],
      // An API key is no operator token, even naming its own company.
      [{ authorization: `Bearer ${key.secret}`, "x-mail-company-id": a }, Code.PermissionDenied],
      [{ "x-mail-company-id": a }, Code.Unauthenticated],
    ];
    for (const [headers, code] of cases) {
      const error = await operator.getAccount({}, { headers }).catch((e: unknown) => e);
      expect((error as ConnectError).code, JSON.stringify(Object.keys(headers))).toBe(code);
    }
    const ok = await operator.getAccount({}, asOperator(a));
    expect(ok.organization?.id).toBe(a);
  });

  it("a session cannot name another company: x-mail-company-id is ignored on the public listener", async () => {
    const member = await signedIn(h, a, "member@a.example", "member");
    const lists = await member.call("mail.v1.MailService", "GetAccount", {}, { "x-mail-company-id": b });
    expect((lists.body.organization as { id: string }).id).toBe(a);
  });

  it("a member session is refused on the operator listener, and an unknown cookie is 401", async () => {
    const admin = await signedIn(h, a, "admin2@a.example", "admin");
    const onOperator = await fetch(new URL("/mail.v1.ListsService/ListContactLists", h.app.operatorUrl), {
      method: "POST",
      headers: browserHeaders(admin.origin, admin.cookie),
      body: "{}",
    });
    expect(onOperator.status).toBe(401);
    const forged = await fetch(new URL("/mail.v1.ListsService/ListContactLists", h.app.httpUrl), {
      method: "POST",
      headers: browserHeaders(admin.origin, "C".repeat(43)),
      body: "{}",
    });
    expect(forged.status).toBe(401);
    expect(reasonOf({ status: 401, body: (await forged.json()) as Record<string, unknown>, headers: forged.headers })).toBe("AUTHENTICATION_REQUIRED");
  });
});
