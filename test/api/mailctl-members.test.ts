import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { mailctlAgainst } from "../support/mailctl.ts";
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
