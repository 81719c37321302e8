import { type Client, WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import { boundedCall, START_DEADLINE_MS } from "../client.ts";
import type { DomainLifecycle } from "../../../capabilities/sending-setup/index.ts";
import { domainChecks, type DomainChecksInput } from "../../../../workflows/domains/domain-checks.ts";
import { DOMAIN_STATUS, MAIL_COMPANY_ID } from "../../../../workflows/search-attributes.ts";

/** How often the service re-checks a domain by itself (DOMAIN_CHECK_* settings). */
export interface DomainCheckSchedule {
  readonly pendingIntervalSeconds: number;
  readonly pendingHours: number;
  readonly verifiedIntervalSeconds: number;
}

export interface DomainChecksStarterOptions {
  /** Read when a workflow is started (the process's client is made after the sending setup). */
  readonly client: () => Client;
  readonly taskQueue: string;
  readonly schedule: DomainCheckSchedule;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
}

export function domainChecksWorkflowId(domainId: string): string {
  return `domain-checks-${domainId}`;
}

export function domainChecksInput(domain: { companyId: string; domainId: string }, schedule: DomainCheckSchedule): DomainChecksInput {
  return {
    companyId: domain.companyId,
    domainId: domain.domainId,
    pendingIntervalSeconds: schedule.pendingIntervalSeconds,
    pendingForSeconds: schedule.pendingHours * 3600,
    verifiedIntervalSeconds: schedule.verifiedIntervalSeconds,
  };
}

/**
 * Starts a domain's re-check workflow when it is added, and again when
 * "check now" finds it while none runs (one that stopped after its pending
 * window, or one that could not be started): a running workflow of the
 * same id refuses the start, so a domain has one at a time. A start that
 * fails (Temporal unreachable) is logged and made again by the next check
 * now; the domain is added either way.
 */
export function createDomainChecksStarter(options: DomainChecksStarterOptions): DomainLifecycle {
  const start = async (domain: { companyId: string; domainId: string }): Promise<void> => {
    const client = options.client();
    try {
      await boundedCall(client, START_DEADLINE_MS, () =>
        client.workflow.start(domainChecks, {
          workflowId: domainChecksWorkflowId(domain.domainId),
          taskQueue: options.taskQueue,
          args: [domainChecksInput(domain, options.schedule)],
          // A new run once the previous one ended (a domain pending past its window, checked again by hand).
          workflowIdReusePolicy: "ALLOW_DUPLICATE",
          typedSearchAttributes: [
            { key: MAIL_COMPANY_ID, value: domain.companyId },
            { key: DOMAIN_STATUS, value: "pending" },
          ],
        }),
      );
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return;
      options.log.warn({ domainId: domain.domainId, err: error }, "could not start the domain's re-check workflow; the next check now starts it");
    }
  };
  // In the background: the caller's answer never waits for Temporal (close() of the client waits for these).
  return {
    async domainAdded(domain) {
      void start(domain);
    },
    async domainChecked(domain) {
      void start(domain);
    },
    async domainRemoved() {
      // Its workflow ends at its next check, which finds the domain gone.
    },
  };
}
