import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "@gen/google/rpc/error_details_pb.js";

/** The contract's error code of a failed call (`NOT_FOUND`, `VALIDATION_ERROR`, ...), from its google.rpc.ErrorInfo detail. */
export function errorCode(error: unknown): string | undefined {
  if (!error) return undefined;
  return ConnectError.from(error).findDetails(ErrorInfoSchema)[0]?.reason;
}

/** The server's message, without Connect's "[code]" prefix. */
export function errorMessage(error: unknown): string {
  if (!error) return "";
  return ConnectError.from(error).rawMessage || "The request failed.";
}

export function isUnauthenticated(error: unknown): boolean {
  return error instanceof ConnectError && error.code === Code.Unauthenticated;
}

export function isNotFound(error: unknown): boolean {
  return error instanceof ConnectError && error.code === Code.NotFound;
}

/** Errors a retry cannot fix: the answer is the same the next time. */
export function isFinal(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return false;
  return [Code.Unauthenticated, Code.PermissionDenied, Code.NotFound, Code.InvalidArgument, Code.FailedPrecondition, Code.AlreadyExists, Code.ResourceExhausted].includes(error.code);
}
