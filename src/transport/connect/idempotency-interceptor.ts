import {
  type DescField,
  type DescMessage,
  type DescMethodUnary,
  type DescService,
  type MessageInitShape,
  type MessageShape,
  create,
  fromBinary,
  isMessage,
  ScalarType,
  toBinary,
} from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from "../../contract/names.ts";
import { operationSpec } from "../../contract/routes.ts";
import { apiErrorFrom } from "../../contract/api-error.ts";
import { boundedApiError } from "../bounded-errors.ts";
import {
  bodyKeyField,
  type IdempotencyGuard,
  idempotentRequestFingerprint,
  readIdempotencyKey,
  storableHeaders,
} from "../../capabilities/idempotency/index.ts";
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
 * The key is the `Idempotency-Key` header or, for a request with an
 * `idempotency_key` field (SendMessage), that field: one reading of it
 * (readIdempotencyKey), and one fingerprint that ignores where it was
 * written. Requests without a key, and operations without a caller, go
 * straight to the handler. A replay never reaches the handler: it is
 * answered here, with `idempotent-replayed: true` and, in a response with a
 * `replayed` field, `replayed: true` (the stored first answer said false).
 * A fresh answer whose `replayed` is true (a send whose key already names a
 * message of the company) carries the header too: it is a replay as well.
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

/** Errors of the handler with bounded messages: an error answer is stored for its replays. */
async function boundedErrors<T>(run: () => Promise<T> | T): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const known = apiErrorFrom(error);
    throw known ? boundedApiError(known) : error;
  }
}

/** The `bool replayed` field of a response (SendMessageResponse), if it has one. */
function replayedField(output: DescMessage): DescField | undefined {
  const field = output.fields.find((f) => f.name === "replayed");
  return field?.fieldKind === "scalar" && field.scalar === ScalarType.BOOL ? field : undefined;
}

/** Messages of protobuf-es are plain objects keyed by the fields' local names. */
function fieldsOf(message: MessageShape<DescMessage>): Record<string, unknown> {
  return message as unknown as Record<string, unknown>;
}

function idempotentUnary(method: DescMethodUnary, handler: UnaryImpl, guard: IdempotencyGuard): UnaryImpl {
  const rpc = `${method.parent.typeName}/${method.name}`;
  const keyField = bodyKeyField(method.input);
  const replayed = replayedField(method.output);
  return async (request, ctx) => {
    const bodyKey = keyField ? fieldsOf(request)[keyField.localName] : undefined;
    const key = readIdempotencyKey(ctx.requestHeader.get(IDEMPOTENCY_KEY_HEADER), typeof bodyKey === "string" ? bodyKey : undefined);
    const caller = ctx.values.get(kCaller);
    if (key === undefined || !caller) return handler(request, ctx);

    const scope = { apiKeyId: caller.keyId, key, rpc, requestHash: idempotentRequestFingerprint(rpc, method.input, request) };
    const outcome = await guard.execute(
      scope,
      async () => {
        const result = await boundedErrors(() => handler(request, ctx));
        const message = isMessage(result, method.output) ? result : create(method.output, result);
        if (replayed && fieldsOf(message)[replayed.localName] === true) ctx.responseHeader.set(IDEMPOTENT_REPLAYED_HEADER, "true");
        return { value: message, response: toBinary(method.output, message), headers: storableHeaders(ctx.responseHeader) };
      },
      { signal: ctx.signal, deadlineMs: ctx.timeoutMs() },
    );
    if (!outcome.replayed) return outcome.value;
    for (const [name, value] of Object.entries(outcome.headers)) ctx.responseHeader.set(name, value);
    const answer = fromBinary(method.output, outcome.response);
    // The spec: `replayed` is true whenever the call returned an already existing message.
    if (replayed) fieldsOf(answer)[replayed.localName] = true;
    return answer;
  };
}
