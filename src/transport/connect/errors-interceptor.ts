import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ApiError, apiErrorFrom } from "../../contract/api-error.ts";
import { REQUEST_ID_HEADER } from "./context.ts";

export interface ErrorLogger {
  error(details: Record<string, unknown>, message: string): void;
}

/**
 * Outermost interceptor: every error leaves as a ConnectError that carries
 * the contract's error code as a google.rpc.ErrorInfo detail. Errors the
 * contract does not name become INTERNAL_ERROR with a generic message; the
 * detail is logged under the request id and never sent to the caller.
 */
export function errorsInterceptor(log: ErrorLogger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (error) {
      const known = apiErrorFrom(error);
      if (known) throw known.toConnectError();
      if (error instanceof ConnectError && error.code === Code.InvalidArgument) {
        // Connect itself rejected the request (for example malformed protobuf JSON).
        throw new ApiError("VALIDATION_ERROR", error.rawMessage).toConnectError();
      }
      if (error instanceof ConnectError && (error.code === Code.Canceled || error.code === Code.DeadlineExceeded)) {
        throw error;
      }
      const requestId = req.header.get(REQUEST_ID_HEADER) ?? "";
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
