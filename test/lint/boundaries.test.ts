import path from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * The layering rules of eslint.config.js bite: each deliberate violation
 * below, linted as if it were a file at that place in the tree, is reported,
 * and the allowed import next to it is not. (The files are never written:
 * `lintText` with a `filePath` applies the configuration of that path.)
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const eslint = new ESLint({ cwd: ROOT });

async function restrictedImports(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === "no-restricted-imports" || m.ruleId === "@typescript-eslint/no-restricted-imports")
    .map((m) => m.message);
}

describe("layer boundaries (eslint no-restricted-imports)", () => {
  const capability = "src/capabilities/example/use-case.ts";

  it.each([
    ["the pg driver", `import pg from "pg";\nexport const x = pg;\n`],
    ["MikroORM", `import { MikroORM } from "@mikro-orm/postgresql";\nexport const x = MikroORM;\n`],
    ["the Temporal SDK", `import { Client } from "@temporalio/client";\nexport const x = Client;\n`],
    ["Fastify", `import fastify from "fastify";\nexport const x = fastify;\n`],
    ["Connect", `import { ConnectError } from "@connectrpc/connect";\nexport const x = ConnectError;\n`],
    ["nodemailer", `import nodemailer from "nodemailer";\nexport const x = nodemailer;\n`],
    ["an adapter", `import { inTransaction } from "../../adapters/postgres/transaction.ts";\nexport const x = inTransaction;\n`],
    ["the transport", `import { x } from "../../transport/http/error-reply.ts";\nexport const y = x;\n`],
    ["the composition root", `import { x } from "../../wiring/services.ts";\nexport const y = x;\n`],
    ["the configuration", `import { loadConfig } from "../../config.ts";\nexport const x = loadConfig;\n`],
    ["generated proto types", `import type { SendMessageRequest } from "../../gen/mail/v1/mail_pb.js";\nexport type X = SendMessageRequest;\n`],
    ["protobuf-es", `import { create } from "@bufbuild/protobuf";\nexport const x = create;\n`],
  ])("a capability importing %s is an error", async (_what, code) => {
    expect(await restrictedImports(capability, code)).toHaveLength(1);
  });

  it("a capability may import the contract and another capability's rules", async () => {
    const code = `import { ApiError } from "../../contract/api-error.ts";\nimport { x } from "../messages/statuses.ts";\nexport const y = [ApiError, x];\n`;
    expect(await restrictedImports(capability, code)).toEqual([]);
  });

  it("the transport importing an adapter or the composition root is an error", async () => {
    const file = "src/transport/connect/example.ts";
    expect(await restrictedImports(file, `import { x } from "../../adapters/postgres/sql.ts";\nexport const y = x;\n`)).toHaveLength(1);
    expect(await restrictedImports(file, `import { x } from "../../wiring/api.ts";\nexport const y = x;\n`)).toHaveLength(1);
    expect(await restrictedImports(file, `import { x } from "../../capabilities/messages/statuses.ts";\nexport const y = x;\n`)).toEqual([]);
  });

  it("an adapter importing the transport is an error", async () => {
    const file = "src/adapters/postgres/example.ts";
    expect(await restrictedImports(file, `import { x } from "../../transport/http/error-reply.ts";\nexport const y = x;\n`)).toHaveLength(1);
    expect(await restrictedImports(file, `import { x } from "../../capabilities/messages/statuses.ts";\nexport const y = x;\n`)).toEqual([]);
  });

  it("a workflow imports only the workflow SDK and its own activity interfaces: nothing from src, not even types", async () => {
    const file = "workflows/example/example.ts";
    expect(await restrictedImports(file, `import { x } from "../../src/adapters/temporal/messages/activities.ts";\nexport const y = x;\n`)).toHaveLength(1);
    expect(await restrictedImports(file, `import type { X } from "../../src/capabilities/messages/statuses.ts";\nexport type Y = X;\n`)).toHaveLength(1);
    expect(await restrictedImports(file, `import { Client } from "@temporalio/client";\nexport const y = Client;\n`)).toHaveLength(1);
    const allowed = `import type { MessageActivities } from "./activities.ts";\nimport { sleep } from "@temporalio/workflow";\nexport type A = MessageActivities;\nexport const s = sleep;\n`;
    expect(await restrictedImports(file, allowed)).toEqual([]);
  });
});
