import { continueAsNew, proxyActivities, sleep, upsertSearchAttributes } from "@temporalio/workflow";
import type { CheckDomainResult, DomainCheckActivities } from "./activities.ts";
import { DOMAIN_STATUS } from "../search-attributes.ts";

/**
 * One workflow per sending domain (id `domain-checks-<domainId>`): it looks
 * the domain's DNS records up by itself, every `pendingIntervalSeconds`
 * while the domain is pending, for up to `pendingForSeconds` from the
 * domain's first check in this chain of runs, then every
 * `verifiedIntervalSeconds` once it is verified (or degraded). A domain
 * still pending at the end of that window is left to "check now", whose
 * success starts the workflow again. A deleted domain ends it. The check
 * itself (and the owners' notice when a verified domain loses a record) is
 * the activity's: this code only keeps time. Deterministic: every I/O is
 * the activity.
 *
 * Search attribute DomainStatus follows the domain: pending, verified, degraded.
 * A long life is cut into runs (continue-as-new) so no history grows without end.
 */
export interface DomainChecksInput {
  readonly companyId: string;
  readonly domainId: string;
  readonly pendingIntervalSeconds: number;
  readonly pendingForSeconds: number;
  readonly verifiedIntervalSeconds: number;
  /** When this chain of runs began checking (ms since the epoch); set by the workflow for the runs it continues as. */
  readonly pendingSinceMs?: number;
}

/** How the workflow ended: the domain was deleted, or it stayed pending past the window. */
export type DomainChecksResult = "gone" | "stopped_pending";

/** Checks per run before it continues as a new one. */
export const CHECKS_PER_RUN = 100;

const { checkDomain } = proxyActivities<DomainCheckActivities>({
  // Four DNS lookups with their retries, and the recording.
  startToCloseTimeout: "1m",
  retry: { initialInterval: "5s", backoffCoefficient: 2, maximumInterval: "5m" },
});

export async function domainChecks(input: DomainChecksInput): Promise<DomainChecksResult> {
  const pendingSince = input.pendingSinceMs ?? Date.now();
  let shown: CheckDomainResult["status"] | undefined;
  for (let check = 0; check < CHECKS_PER_RUN; check++) {
    const { status } = await checkDomain({ companyId: input.companyId, domainId: input.domainId });
    if (status === "gone") return "gone";
    if (status !== "unavailable" && status !== shown) {
      upsertSearchAttributes([{ key: DOMAIN_STATUS, value: status }]);
      shown = status;
    }
    const pending = shown === undefined || shown === "pending";
    if (pending && Date.now() - pendingSince >= input.pendingForSeconds * 1000) return "stopped_pending";
    await sleep((pending ? input.pendingIntervalSeconds : input.verifiedIntervalSeconds) * 1000);
  }
  // The same domain, a fresh history; the pending window goes on from where it was.
  return continueAsNew<typeof domainChecks>({ ...input, pendingSinceMs: pendingSince });
}
