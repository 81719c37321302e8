import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { create, type DescField, type DescMessage, type DescService } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { holdsSecrets, isSecretField, withoutSecrets } from "../../src/transport/connect/secret-fields.ts";
import { CreateWebhookEndpointResponseSchema, ListWebhookEndpointsResponseSchema, RotateWebhookSecretResponseSchema } from "../../src/gen/mail/v1/webhooks_pb.js";

/**
 * Secrets are declared in the contract (`[debug_redact = true]`) and the
 * idempotency layer keeps answers without them. These
 * tests prove the redaction, and that the declaration is not forgotten: a
 * response field whose name says it holds a secret must carry the option.
 */
const SECRET_NAME = /(^|_)(secret|token|password|sign_in_url)$/;

async function allServices(): Promise<DescService[]> {
  const dir = fileURLToPath(new URL("../../src/gen/mail/v1/", import.meta.url));
  const services: DescService[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith("_pb.js"))) {
    const module = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
    for (const value of Object.values(module)) if ((value as Partial<DescService>).kind === "service") services.push(value as DescService);
  }
  return services;
}

/** Every field of a message, nested messages included (cycles guarded), with its path. */
function fieldsOf(desc: DescMessage, prefix = "", seen = new Set<string>()): { path: string; field: DescField }[] {
  if (seen.has(desc.typeName)) return [];
  seen.add(desc.typeName);
  return desc.fields.flatMap((field) => {
    const here = { path: `${prefix}${field.name}`, field };
    const inner = field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message") ? field.message : undefined;
    return inner ? [here, ...fieldsOf(inner, `${prefix}${field.name}.`, seen)] : [here];
  });
}

describe("secret fields of the contract", () => {
  it("every response field named like a secret is declared debug_redact", async () => {
    const unmarked: string[] = [];
    for (const service of await allServices()) {
      for (const method of service.methods) {
        for (const { path, field } of fieldsOf(method.output)) {
          if (field.fieldKind === "scalar" && SECRET_NAME.test(field.name) && !isSecretField(field)) unmarked.push(`${service.name}.${method.name}: ${path}`);
        }
      }
    }
    expect(unmarked).toEqual([]);
  });

  it("the webhook secrets are declared; an endpoint list holds none", () => {
    expect(holdsSecrets(CreateWebhookEndpointResponseSchema)).toBe(true);
    expect(holdsSecrets(RotateWebhookSecretResponseSchema)).toBe(true);
    expect(holdsSecrets(ListWebhookEndpointsResponseSchema)).toBe(false);
  });

  it("withoutSecrets clears the secret in a copy, names it, and leaves the caller's answer whole", () => {
    const answer = create(CreateWebhookEndpointResponseSchema, { endpoint: { id: "e-1", url: "https://hooks.example/x", events: ["sent"] }, secret: "whsec_abc" });
    const kept = withoutSecrets(CreateWebhookEndpointResponseSchema, answer);
    expect(kept.redacted).toEqual(["secret"]);
    expect(kept.message.secret).toBe("");
    expect(kept.message.endpoint?.id).toBe("e-1");
    expect(answer.secret).toBe("whsec_abc");
    // Nothing to clear: nothing named.
    expect(withoutSecrets(CreateWebhookEndpointResponseSchema, create(CreateWebhookEndpointResponseSchema, {})).redacted).toEqual([]);
  });
});
