import type { FastifyInstance } from "fastify";
import { documentedRegistry } from "../../openapi/descriptor-set.ts";
import { generateOpenApi, OPENAPI_JSON_PATH } from "../../openapi/document.ts";

/** GET /mail/v1/openapi.json: the OpenAPI 3.0 document, generated from the contract. No authentication. */
export function openApiRoute(app: FastifyInstance): void {
  let document: unknown;
  app.get(OPENAPI_JSON_PATH, async (_request, reply) => {
    document ??= generateOpenApi({ registry: documentedRegistry() });
    return reply.type("application/json").send(document);
  });
}
