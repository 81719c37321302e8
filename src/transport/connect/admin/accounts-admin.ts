import { create } from "@bufbuild/protobuf";
import { optionalTimestamp } from "../timestamps.ts";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AccountsService, CompanyView } from "../../../capabilities/accounts/index.ts";
import { AdminService, type Company, type CompanyEntitlements, CompanySchema } from "../../../gen/mail/v1/admin_pb.js";

/**
 * AdminService handlers of companies and their entitlements. The operator token is checked by the auth
 * interceptor; the rules are in the accounts domain. Served over gRPC and Connect only. A company's API keys
 * are the ApiKeysService's (src/transport/connect/api-keys), operators included.
 */
function companyMessage(view: CompanyView): Company {
  return create(CompanySchema, {
    id: view.id,
    name: view.name,
    entitlements: { api: view.entitlements.api, smtp: view.entitlements.smtp },
    createdAt: optionalTimestamp(view.createdAt),
  });
}

/** The entitlements of a request as plain values (the domain refuses unknown keys). */
function entitlementsOf(message: CompanyEntitlements | undefined): { api?: boolean; smtp?: boolean } {
  return message ? { api: message.api, smtp: message.smtp } : {};
}

/** The AdminService RPCs of companies. */
export type AccountsAdmin = Pick<ServiceImpl<typeof AdminService>, "createCompany" | "setEntitlements" | "listCompanies">;

export function accountsAdmin(accounts: AccountsService): AccountsAdmin {
  return {
    async createCompany(req) {
      return { company: companyMessage(await accounts.createCompany(req.name, entitlementsOf(req.entitlements))) };
    },
    async setEntitlements(req) {
      return { company: companyMessage(await accounts.setEntitlements(req.companyId, entitlementsOf(req.entitlements))) };
    },
    async listCompanies() {
      return { companies: (await accounts.listCompanies()).map(companyMessage) };
    },
  };
}
