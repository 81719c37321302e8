import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ApiError, apiErrorFrom } from "../../contract/api-error.ts";
import { REQUEST_ID_HEADER } from "../../contract/names.ts";
import { boundedApiError } from "../bounded-errors.ts";
import { decodeFailure } from "../http/undecodable-requests.ts";

export interface ErrorLogger {
  error(details: Record<string, unknown>, message: string): void;
}

/**
 * Outermost interceptor: every error leaves as a ConnectError that carries
 * the contract's error code as a google.rpc.ErrorInfo detail. Errors the
 * contract does not name become INTERNAL_ERROR with a generic message; the
 * detail is logged under the request id and never sent to the caller.
 * Messages are bounded (src/transport/bounded-errors.ts).
 */
/**
 * `classifyUnexpected` may recognise an unexpected error as one the
 * contract names (for example a saturated database as 503
 * SERVICE_UNAVAILABLE with retry-after); the composition root supplies it.
 */
export function errorsInterceptor(log: ErrorLogger, classifyUnexpected: (error: unknown) => ApiError | undefined = () => undefined): Interceptor {
  return (next) => async (req) => {
    const answerOf = (error: unknown) => contractError(error, req, log, classifyUnexpected);
    try {
      const res = await next(req);
      // A stream's handler runs while the stream is read: its errors (a refusal before the first message included) are mapped there.
      return res.stream ? { ...res, message: mappedErrors(res.message, answerOf) } : res;
    } catch (error) {
      throw answerOf(error);
    }
  };
}

async function* mappedErrors<T>(messages: AsyncIterable<T>, answerOf: (error: unknown) => unknown): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (error) {
    throw answerOf(error);
  }
}

/** What the caller gets for `error`: the contract's error, or INTERNAL_ERROR with the detail logged. */
function contractError(
  error: unknown,
  req: { readonly header: Headers; readonly service: { readonly typeName: string }; readonly method: { readonly name: string } },
  log: ErrorLogger,
  classifyUnexpected: (error: unknown) => ApiError | undefined,
): unknown {
  const known = apiErrorFrom(error);
  if (known) return boundedApiError(known).toConnectError();
  // A stream's request is decoded as the stream is read: Connect's decode failure is the caller's mistake there too.
  const undecodable = error instanceof ConnectError ? decodeFailure(error.code, error.rawMessage, error.details.length > 0) : undefined;
  if (undecodable) return undecodable;
  if (error instanceof ConnectError && error.code === Code.InvalidArgument) {
    // Connect itself rejected the request (for example malformed protobuf JSON).
    return boundedApiError(new ApiError("VALIDATION_ERROR", error.rawMessage)).toConnectError();
  }
  if (error instanceof ConnectError && (error.code === Code.Canceled || error.code === Code.DeadlineExceeded)) {
    return error;
  }
  const requestId = req.header.get(REQUEST_ID_HEADER) ?? "";
  const classified = classifyUnexpected(error);
  if (classified) {
    log.error({ err: error, requestId, rpc: `${req.service.typeName}/${req.method.name}` }, `answered ${classified.code}`);
    return classified.toConnectError();
  }
  log.error({ err: error, requestId, rpc: `${req.service.typeName}/${req.method.name}` }, "unexpected error while handling a call");
  return new ApiError("INTERNAL_ERROR", `An unexpected error occurred. Quote request id ${requestId} when contacting support.`).toConnectError();
}
