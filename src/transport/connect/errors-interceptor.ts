import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ApiError, apiErrorFrom } from "../../contract/api-error.ts";
import { REQUEST_ID_HEADER } from "../../contract/names.ts";
import { boundedApiError } from "../bounded-errors.ts";

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
    try {
      return await next(req);
    } catch (error) {
      const known = apiErrorFrom(error);
      if (known) throw boundedApiError(known).toConnectError();
      if (error instanceof ConnectError && error.code === Code.InvalidArgument) {
        // Connect itself rejected the request (for example malformed protobuf JSON).
        throw boundedApiError(new ApiError("VALIDATION_ERROR", error.rawMessage)).toConnectError();
      }
      if (error instanceof ConnectError && (error.code === Code.Canceled || error.code === Code.DeadlineExceeded)) {
        throw error;
      }
      const requestId = req.header.get(REQUEST_ID_HEADER) ?? "";
      const classified = classifyUnexpected(error);
      if (classified) {
        log.error({ err: error, requestId, rpc: `${req.service.typeName}/${req.method.name}` }, `answered ${classified.code}`);
        throw classified.toConnectError();
      }
      log.error(
        { err: error, requestId, rpc: `${req.service.typeName}/${req.method.name}` },
        "unexpected error while handling a call",
      );
      throw new ApiError(
        "INTERNAL_ERROR",
        `An unexpected error occurred. Quote request id ${requestId} when contacting support.`,
      ).toConnectError();
    }
  };
}
