import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type FieldProblem, ValidationError } from "../../contract/api-error.ts";

/** A nullable domain date as an optional protobuf Timestamp (unset renders as null on REST). */
export function optionalTimestamp(date: Date | null | undefined): Timestamp | undefined {
  return date ? timestampFromDate(date) : undefined;
}

/**
 * A report's period from its request's `since` and `until`: an unset bound
 * is no bound. A Timestamp outside the dates JavaScript can hold (a gRPC
 * caller can send one) is 400 naming it.
 */
export function periodOf(req: { readonly since?: Timestamp | undefined; readonly until?: Timestamp | undefined }): { since: Date | undefined; until: Date | undefined } {
  const problems: FieldProblem[] = [];
  const date = (field: "since" | "until"): Date | undefined => {
    const value = req[field];
    if (!value) return undefined;
    const parsed = timestampDate(value);
    if (Number.isNaN(parsed.getTime())) problems.push({ field, problem: "must be a date-time" });
    return parsed;
  };
  const period = { since: date("since"), until: date("until") };
  if (problems.length > 0) throw new ValidationError(problems);
  return period;
}
