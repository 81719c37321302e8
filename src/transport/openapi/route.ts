import { readFileSync } from "node:fs";
import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import type { FastifyInstance } from "fastify";
import { generateOpenApi } from "../../openapi/generate.ts";

/**
 * The descriptors with their source comments (`npm run generate` writes the
 * set with `buf build`): the generated code drops comments, and the proto
 * comments are the API documentation.
 */
const DESCRIPTOR_SET = new URL("../../gen/mail.binpb", import.meta.url);

function documentedRegistry() {
  return createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(DESCRIPTOR_SET)));
}

/** GET /mail/v1/openapi.json: the OpenAPI 3.0 document, generated from the contract. No authentication. */
export function openApiRoute(app: FastifyInstance): void {
  let document: unknown;
  app.get("/mail/v1/openapi.json", async (_request, reply) => {
    document ??= generateOpenApi({ registry: documentedRegistry() });
    return reply.type("application/json").send(document);
  });
}
