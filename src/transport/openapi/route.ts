import type { FastifyInstance } from "fastify";
import { generateOpenApi } from "../../openapi/generate.ts";

/** GET /mail/v1/openapi.json: the OpenAPI 3.0 document, generated from the contract. No authentication. */
export function openApiRoute(app: FastifyInstance): void {
  let document: unknown;
  app.get("/mail/v1/openapi.json", async (_request, reply) => {
    document ??= generateOpenApi({});
    return reply.type("application/json").send(document);
  });
}
