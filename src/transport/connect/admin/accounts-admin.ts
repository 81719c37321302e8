import type { ServiceImpl } from "@connectrpc/connect";
import type { Companies } from "../../../capabilities/accounts/index.ts";
import type { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { companyMessage, createCompanyCommand, setEntitlementsCommand } from "./mapping.ts";

/**
 * AdminService handlers of companies and their entitlements. The operator
 * token is checked by the auth interceptor; the rules are in the accounts
 * capability. A company's API keys are the ApiKeysService's
 * (src/transport/connect/api-keys), operators included.
 */
export type AccountsAdmin = Pick<ServiceImpl<typeof AdminService>, "createCompany" | "setEntitlements" | "listCompanies">;

export function accountsAdmin(companies: Companies): AccountsAdmin {
  return {
    async createCompany(req) {
      return { company: companyMessage(await companies.create(createCompanyCommand(req))) };
    },
    async setEntitlements(req) {
      return { company: companyMessage(await companies.setEntitlements(setEntitlementsCommand(req))) };
    },
    async listCompanies() {
      return { companies: (await companies.list()).map(companyMessage) };
    },
  };
}
