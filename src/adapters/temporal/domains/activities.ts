import type { SendingDomains } from "../../../capabilities/sending-setup/index.ts";
import { ApiError } from "../../../contract/api-error.ts";
import type { CheckDomainResult, DomainCheckActivities } from "../../../../workflows/domains/activities.ts";

/**
 * The re-check workflow's activity (declared in workflows/domains/activities.ts):
 * the capability's check, without an audit row (the service looking at DNS
 * changes no one's settings). A deleted domain answers `gone`; DNS that
 * cannot answer, `unavailable` (the domain is left as it was).
 */
export function createDomainCheckActivities(deps: { readonly domains: Pick<SendingDomains, "check"> }): DomainCheckActivities {
  return {
    async checkDomain(input): Promise<CheckDomainResult> {
      try {
        const domain = await deps.domains.check({ companyId: input.companyId, domainId: input.domainId });
        return { status: domain.status };
      } catch (error) {
        if (error instanceof ApiError && error.code === "NOT_FOUND") return { status: "gone" };
        if (error instanceof ApiError && error.code === "SERVICE_UNAVAILABLE") return { status: "unavailable" };
        throw error;
      }
    },
  };
}
