import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { mailctlAgainst } from "../support/mailctl.ts";
import { MemberRole, MembersService } from "../../src/gen/mail/v1/members_pb.js";
import { Browser, tokenOf } from "./members-support.ts";

describe("mailctl member commands: the first owner and a sign-in link", () => {
  let h: ApiHarness;

  beforeAll(async () => {
    h = await startApiHarness({ trustProxy: true });
  });
  afterAll(async () => h?.close());

  const { mailctl, ok } = mailctlAgainst(() => h.app.operatorUrl);

  it("adds an owner and prints a link that signs them in once", async () => {
    const { company } = await ok<{ company: { id: string } }>(["company", "create", "--name", "CLI Members Co"]);
    const added = await ok<{ member: { id: string; email: string; role: string } }>([
      "member", "add", "--company", company.id, "--email", "Boss@CLI.example", "--role", "owner", "--display-name", "The Boss",
    ]);
    expect(added.member).toMatchObject({ email: "boss@cli.example", role: "owner" });

    const link = await ok<{ signInUrl: string; expiresAt: string; member: { id: string } }>(["member", "sign-in-link", "--company", company.id, "--email", "boss@cli.example"]);
    expect(link.member.id).toBe(added.member.id);
    const minutes = (new Date(link.expiresAt).getTime() - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(14);
    expect(minutes).toBeLessThanOrEqual(15);

    const browser = new Browser(h);
    expect((await browser.exchange(tokenOf(link.signInUrl))).status).toBe(200);
    const session = await browser.call("mail.v1.SessionService", "GetSession");
    expect((session.body.session as { member: { displayName: string; role: string } }).member).toMatchObject({ displayName: "The Boss", role: "MEMBER_ROLE_OWNER" });
    expect((await new Browser(h).exchange(tokenOf(link.signInUrl))).status).toBe(401);
  });

  it("adding an existing member gives them the role and enables them; the member is printed either way", async () => {
    const { company } = await ok<{ company: { id: string } }>(["company", "create", "--name", "CLI Roles Co"]);
    await ok(["member", "add", "--company", company.id, "--email", "boss@roles.example"]);
    type Printed = { member: { id: string; email: string; role: string; displayName: string; disabled?: boolean } };
    const added = await ok<Printed>(["member", "add", "--company", company.id, "--email", "pat@roles.example", "--role", "member", "--display-name", "Pat"]);
    expect(added.member).toMatchObject({ email: "pat@roles.example", role: "member", displayName: "Pat" });
    await h.forCompany(MembersService, company.id).updateMember({ id: added.member.id, disabled: true });

    const promoted = await ok<Printed>(["member", "add", "--company", company.id, "--email", "Pat@Roles.example", "--role", "admin"]);
    expect(promoted.member).toMatchObject({ id: added.member.id, role: "admin", displayName: "Pat" });
    expect(promoted.member.disabled ?? false).toBe(false);
    const members = await h.forCompany(MembersService, company.id).listMembers({});
    expect(members.items.map((m) => [m.email, m.role, m.disabled])).toEqual([
      ["boss@roles.example", MemberRole.OWNER, false],
      ["pat@roles.example", MemberRole.ADMIN, false],
    ]);
  });

  it("refuses an unknown role, an unknown member and an unknown company", async () => {
    const { company } = await ok<{ company: { id: string } }>(["company", "create", "--name", "CLI Refusals Co"]);
    const badRole = await mailctl(["member", "add", "--company", company.id, "--email", "x@cli.example", "--role", "emperor"]);
    expect(badRole.code).toBe(2);
    const unknownMember = await mailctl(["member", "sign-in-link", "--company", company.id, "--email", "nobody@cli.example"]);
    expect(unknownMember.code).toBe(1);
    expect((JSON.parse(unknownMember.stderr) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    const unknownCompany = await mailctl(["member", "add", "--company", "00000000-0000-4000-8000-000000000000", "--email", "x@cli.example"]);
    expect((JSON.parse(unknownCompany.stderr) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
  });
});
