import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, OPERATOR_TOKEN, startApiHarness } from "../support/api-harness.ts";

/**
 * gRPC server reflection, tried with a real third-party client: `buf curl`
 * (the buf CLI in node_modules) lists the services and calls an RPC with no
 * proto file, only what the server describes about itself; first over
 * `grpc.reflection.v1`, then over `v1alpha` (older grpcurl and grpcui).
 */
const BUF = path.resolve(import.meta.dirname, "../../node_modules/.bin/buf");
const run = promisify(execFile);

async function bufCurl(args: string[]): Promise<string> {
  const { stdout } = await run(BUF, ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], { timeout: 30_000 });
  return stdout;
}

function lines(text: string): string[] {
  return text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
}

describe("gRPC server reflection", () => {
  let h: ApiHarness;
  let secret: string;
  let companyId: string;

  beforeAll(async () => {
    h = await startApiHarness();
    ({ secret, companyId } = await h.newCompanyWithKey(["mail.events.read"]));
  });
  afterAll(async () => {
    await h?.close();
  });

  it("lists the public services on the public gRPC port, and never the AdminService", async () => {
    const services = lines(await bufCurl(["--list-services", h.app.grpcUrl]));
    expect(services).toContain("mail.v1.MailService");
    expect(services).toContain("mail.v1.WebhooksService");
    expect(services).toContain("mail.v1.TemplatesService");
    expect(services).toContain("grpc.health.v1.Health");
    expect(services).not.toContain("mail.v1.AdminService");
    expect(services).not.toContain("mail.v1.EventsService");
  });

  it("lists the AdminService on the operator listener, and every company service operators act through (x-mail-company-id)", async () => {
    const services = lines(await bufCurl(["--list-services", h.app.operatorUrl]));
    expect(services).toContain("mail.v1.AdminService");
    for (const name of ["SignupForms", "Reports", "Lists", "Webhooks", "ApiKeys", "Members", "Audit", "Templates", "Mail"]) {
      expect(services).toContain(`mail.v1.${name}Service`);
    }
    // The mirrors are gone: one handler per RPC, whoever calls.
    const methods = lines(await bufCurl(["--list-methods", h.app.operatorUrl]));
    expect(methods).toContain("mail.v1.AdminService/CreateCompany");
    expect(methods.filter((m) => /^mail\.v1\.AdminService\/.*(ApiKey|Webhook|ContactList|SignupForm|Template|Revenue)/.test(m))).toEqual([]);
  });

  it("describes the methods of every service it lists", async () => {
    const methods = lines(await bufCurl(["--list-methods", h.app.grpcUrl]));
    expect(methods).toContain("mail.v1.MailService/SendMessage");
    expect(methods).toContain("mail.v1.MailService/GetAccount");
  });

  it.each([["grpc-v1"], ["grpc-v1alpha"]])("lets a client call an RPC from the reflected schema alone (%s)", async (protocol) => {
    const out = await bufCurl([
      "--reflect-protocol",
      protocol,
      "-H",
      `authorization: Bearer ${secret}`,
      "-d",
      "{}",
      `${h.app.grpcUrl}/mail.v1.MailService/GetAccount`,
    ]);
    const account = JSON.parse(out) as { organization?: { id?: string } };
    expect(account.organization?.id).toBe(companyId);
  });

  it("keeps the RPCs themselves behind their keys: reflection opens the schema, not the data", async () => {
    const refused = bufCurl(["-d", "{}", `${h.app.grpcUrl}/mail.v1.MailService/GetAccount`]);
    await expect(refused).rejects.toThrow(/unauthenticated/i);
    const operatorCall = await bufCurl(["-H", `authorization: Bearer ${OPERATOR_TOKEN}`, "-d", "{}", `${h.app.operatorUrl}/mail.v1.AdminService/ListCompanies`]);
    expect(operatorCall).toContain(companyId);
  });
});
