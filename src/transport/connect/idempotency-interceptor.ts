import {
  type DescMessage,
  type DescMethodUnary,
  type DescService,
  type MessageInitShape,
  type MessageShape,
  create,
  fromBinary,
  isMessage,
  toBinary,
} from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REDACTED_HEADER } from "../../contract/names.ts";
import { operationSpec } from "../../contract/routes.ts";
import { apiErrorFrom } from "../../contract/api-error.ts";
import { boundedApiError } from "../bounded-errors.ts";
import { type IdempotencyGuard, parseIdempotencyKey, storableHeaders } from "../../capabilities/idempotency/index.ts";
import { bodyKeyField, idempotentRequestFingerprint } from "./request-fingerprint.ts";
import { holdsSecrets, withoutSecrets } from "./secret-fields.ts";
import { kCaller } from "./context.ts";

type UnaryImpl = (
  request: MessageShape<DescMessage>,
  context: HandlerContext,
) => Promise<MessageInitShape<DescMessage>> | MessageInitShape<DescMessage>;

/**
 * Idempotency for every POST operation of a service (by its contract HTTP
 * verb), for all doors at once: gRPC, Connect, gRPC-Web and the REST bridge
 * (which calls the RPCs in process and forwards `Idempotency-Key`).
 *
 * Why a wrapper of the handlers and not a Connect interceptor: a replay must
 * answer without running the handler, and an interceptor can only do that
 * by fabricating the response object, whose header and trailer then replace
 * the ones the protocol handler prepared (content type, compression,
 * `grpc-status`), which breaks every protocol ("unsupported content type").
 * The wrapper answers through the real handler context instead. It still
 * runs after every interceptor, so after authentication (it scopes records
 * by the caller's key, kCaller) and the rate limit (replays count).
 *
 * The key is the `Idempotency-Key` header, read and validated once here
 * (parseIdempotencyKey). Requests without a key, and operations without a
 * caller, go straight to the handler. A replay never reaches the handler:
 * it is answered here, with `idempotent-replayed: true`.
 *
 * One owner per operation: an operation whose request carries its own key
 * (an `idempotency_key` field: SendMessage, whose key names the message for
 * the whole company, spec Idempotency rule 4) is left to that rule, which
 * the messages capability's send use case applies (MessageAcceptance); the
 * wrapper steps aside for it and keeps no record.
 *
 * Secrets are never stored: response fields marked `debug_redact` in the
 * contract (webhook and API key secrets, sign-in tokens) are cleared from
 * the stored copy, so a replay answers the record without them and names
 * them in `Idempotent-Redacted` (see secret-fields.ts).
 */
export function withIdempotency<S extends DescService, I extends Partial<ServiceImpl<S>>>(
  service: S,
  impl: I,
  guard: IdempotencyGuard,
): I {
  const source = impl as unknown as Record<string, unknown>;
  const wrapped: Record<string, unknown> = {};
  for (const method of service.methods) {
    const fn = source[method.localName];
    // Left out: Connect answers UNIMPLEMENTED for it, as without the wrapper.
    if (typeof fn !== "function") continue;
    const bound = (fn as (...args: unknown[]) => unknown).bind(impl);
    const ownsItsKey = bodyKeyField(method.input) !== undefined;
    wrapped[method.localName] =
      method.methodKind === "unary" && operationSpec(method).http?.verb === "post" && !ownsItsKey
        ? idempotentUnary(method as DescMethodUnary, bound as UnaryImpl, guard)
        : bound;
  }
  return wrapped as unknown as I;
}

/** Errors of the handler with bounded messages: an error answer is stored for its replays. */
async function boundedErrors<T>(run: () => Promise<T> | T): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const known = apiErrorFrom(error);
    throw known ? boundedApiError(known) : error;
  }
}

function idempotentUnary(method: DescMethodUnary, handler: UnaryImpl, guard: IdempotencyGuard): UnaryImpl {
  const rpc = `${method.parent.typeName}/${method.name}`;
  const secretBearing = holdsSecrets(method.output);
  return async (request, ctx) => {
    const key = parseIdempotencyKey(ctx.requestHeader.get(IDEMPOTENCY_KEY_HEADER));
    const caller = ctx.values.get(kCaller);
    if (key === undefined || !caller) return handler(request, ctx);

    const scope = { apiKeyId: caller.keyId, key, rpc, requestHash: idempotentRequestFingerprint(rpc, method.input, request) };
    const outcome = await guard.execute(
      scope,
      async () => {
        const result = await boundedErrors(() => handler(request, ctx));
        const message = isMessage(result, method.output) ? result : create(method.output, result);
        const headers = storableHeaders(ctx.responseHeader);
        if (!secretBearing) return { value: message, response: toBinary(method.output, message), headers };
        // The caller gets the secret now; the record kept for replays never holds it.
        const kept = withoutSecrets(method.output, message);
        if (kept.redacted.length > 0) headers[IDEMPOTENT_REDACTED_HEADER] = kept.redacted.join(",");
        return { value: message, response: toBinary(method.output, kept.message), headers };
      },
      { signal: ctx.signal, deadlineMs: ctx.timeoutMs() },
    );
    if (!outcome.replayed) return outcome.value;
    for (const [name, value] of Object.entries(outcome.headers)) ctx.responseHeader.set(name, value);
    return fromBinary(method.output, outcome.response);
  };
}
