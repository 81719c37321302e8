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

/** One problem of a VALIDATION_ERROR: the field it names (its JSON path) and what is wrong. */
export interface FieldProblem {
  readonly field: string;
  readonly problem: string;
}

/**
 * The problems of a VALIDATION_ERROR, whose message names each field:
 * `displayName: must be at most 200 characters; email: ...`. A problem may
 * itself hold "; " (`at least one owner must remain; make another member
 * owner first`): only "; " followed by a field path and ": " starts the next.
 */
export function fieldProblems(error: unknown): FieldProblem[] {
  const message = errorMessage(error);
  const starts = [...message.matchAll(/(?:^|; )([A-Za-z_][\w.[\]]*): /g)];
  if (starts.length === 0) return [{ field: "", problem: message }];
  return starts.map((start, i) => {
    const from = (start.index ?? 0) + start[0].length;
    const to = starts[i + 1]?.index ?? message.length;
    return { field: start[1] ?? "", problem: message.slice(from, to) };
  });
}

/** The server's message for a person: a VALIDATION_ERROR's problems without the field names a form does not show. */
export function problemText(error: unknown): string {
  if (errorCode(error) !== "VALIDATION_ERROR") return errorMessage(error);
  return fieldProblems(error)
    .map((p) => sentence(p.problem))
    .join(" ");
}

/** A problem as a sentence: "must be ..." becomes "Must be ....". */
export function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === "") return trimmed;
  const capital = trimmed[0]?.toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}
