import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useQuery } from "@connectrpc/connect-query";
import { SignupFormsService } from "@gen/mail/v1/forms_pb.js";
import { useState } from "react";

const DAY_MS = 24 * 60 * 60 * 1000;

/** The window the screen counts sign-ups in. */
export const SIGNUP_DAYS = 30;

/**
 * Sign-ups per form (by public id) in the last 30 days, counted by the
 * service (SignupFormsService.CountSignups); a form without any is absent
 * (0). Undefined until the count arrives.
 */
export function useRecentSignups(): { counts: ReadonlyMap<string, number> | undefined; error: unknown } {
  // Fixed when the page opens: a start that moved with every render would ask again each time.
  const [since] = useState(() => timestampFromDate(new Date(Date.now() - SIGNUP_DAYS * DAY_MS)));
  const query = useQuery(SignupFormsService.method.countSignups, { since });
  return {
    counts: query.data ? new Map(query.data.items.map((row) => [row.publicId, row.signups])) : undefined,
    error: query.isError ? query.error : undefined,
  };
}
