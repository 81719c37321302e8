/**
 * The activity of the domain re-check workflow, declared here (types only)
 * and implemented by src/adapters/temporal/domains/activities.ts. Its input
 * and answer are recorded in every run's history: a field may be added as
 * optional, never renamed or removed, or runs under way stop replaying
 * (test/workflows/domains/replay.test.ts).
 */

export interface CheckDomainInput {
  readonly companyId: string;
  readonly domainId: string;
}

/**
 * The domain after the check: its status, `gone` when it was deleted
 * (nothing more to do), `unavailable` when DNS could not answer (nothing
 * changed; the next check comes as planned).
 */
export type CheckedDomainStatus = "pending" | "verified" | "degraded" | "gone" | "unavailable";

export interface CheckDomainResult {
  readonly status: CheckedDomainStatus;
}

export interface DomainCheckActivities {
  checkDomain(input: CheckDomainInput): Promise<CheckDomainResult>;
}
