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
import { operationSpec } from "../../contract/routes.ts";
import { type IdempotencyGuard, parseIdempotencyKey, requestFingerprint, storableHeaders } from "../../capabilities/idempotency/index.ts";
import { kCaller } from "./context.ts";

/** Request header (gRPC metadata) carrying the key; the REST bridge forwards it. */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";

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
 * Requests without the header, and operations without a caller, go straight
 * to the handler. A replay never reaches the handler: it is answered here,
 * with `idempotent-replayed: true`.
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
    wrapped[method.localName] =
      method.methodKind === "unary" && operationSpec(method).http?.verb === "post"
        ? idempotentUnary(method as DescMethodUnary, bound as UnaryImpl, guard)
        : bound;
  }
  return wrapped as unknown as I;
}

function idempotentUnary(method: DescMethodUnary, handler: UnaryImpl, guard: IdempotencyGuard): UnaryImpl {
  const rpc = `${method.parent.typeName}/${method.name}`;
  return async (request, ctx) => {
    const key = parseIdempotencyKey(ctx.requestHeader.get(IDEMPOTENCY_KEY_HEADER));
    const caller = ctx.values.get(kCaller);
    if (key === undefined || !caller) return handler(request, ctx);

    const scope = { apiKeyId: caller.keyId, key, rpc, requestHash: requestFingerprint(rpc, method.input, request) };
    const outcome = await guard.execute(
      scope,
      async () => {
        const result = await handler(request, ctx);
        const message = isMessage(result, method.output) ? result : create(method.output, result);
        return { value: message, response: toBinary(method.output, message), headers: storableHeaders(ctx.responseHeader) };
      },
      { signal: ctx.signal },
    );
    if (!outcome.replayed) return outcome.value;
    for (const [name, value] of Object.entries(outcome.headers)) ctx.responseHeader.set(name, value);
    return fromBinary(method.output, outcome.response);
  };
}
