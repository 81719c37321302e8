import { isUtf8 } from "node:buffer";
import type { JsonReadOptions } from "@bufbuild/protobuf";
import type { FastifyInstance } from "fastify";
import { ValidationError } from "../../contract/api-error.ts";

/**
 * The JSON bodies of the REST routes: UTF-8 (RFC 8259 8.1), or a 400
 * VALIDATION_ERROR naming `body`. Fastify's own parser decodes the bytes
 * with replacement, so an invalid byte would silently become U+FFFD and be
 * stored as such (a list named "caf\uFFFD"); the gRPC doors refuse the same
 * bytes in a protobuf string. The JSON itself is parsed by Fastify's
 * default parser, with the same protection against prototype poisoning
 * (`__proto__` and `constructor.prototype` keys are refused).
 *
 * Registered in the REST scope only (Connect's routes read their bodies
 * themselves).
 */
export function utf8JsonBodies(scope: FastifyInstance): void {
  const parseJson = scope.getDefaultJsonParser("error", "error");
  if (scope.hasContentTypeParser("application/json")) scope.removeContentTypeParser("application/json");
  scope.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body: Buffer, done) => {
    if (!isUtf8(body)) {
      done(new ValidationError([{ field: "body", problem: "is not valid UTF-8" }]), undefined);
      return;
    }
    parseJson(request, body.toString("utf8"), done);
  });
}

/**
 * Connect's JSON options for the gRPC, gRPC-Web and Connect doors, the
 * rules of the REST bridge's bodies:
 *
 * - the same UTF-8 rule (its default decoder replaces invalid bytes too);
 * - keys that name no field are refused, not ignored (Connect ignores them
 *   by default), and so are enum values by names the enum lacks: a
 *   misspelt field must not pass as "not sent". The REST bridge names them
 *   in its 400; undecodable-requests.ts has Connect's answer name them the
 *   same way, after authentication. (Unknown fields of a binary protobuf
 *   message stay accepted: that is protobuf's forward compatibility, a
 *   newer client's fields reaching an older server, and no JSON key was
 *   misspelt.)
 *
 * A request that does not decode is answered by undecodable-requests.ts.
 */
export const connectJsonOptions: Partial<JsonReadOptions> & { readonly textDecoder: { decode(input?: Uint8Array): string } } = {
  textDecoder: new TextDecoder("utf-8", { fatal: true }),
  ignoreUnknownFields: false,
};
