import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { optionalTimestamp } from "../timestamps.ts";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AccountsService, CompanyView } from "../../../capabilities/accounts/index.ts";
import { AdminService, type Company, type CompanyEntitlements, CompanySchema } from "../../../gen/mail/v1/admin_pb.js";
import { apiKeyMessage } from "../api-keys/index.ts";
import { operatorAuditOf } from "../context.ts";

/**
 * AdminService handlers of companies and API keys. The operator token is checked by the auth interceptor; the
 * rules are in the accounts domain. Served over gRPC and Connect only.
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

/** The AdminService RPCs of companies and API keys. */
export type AccountsAdmin = Pick<
  ServiceImpl<typeof AdminService>,
  "createCompany" | "setEntitlements" | "listCompanies" | "createApiKey" | "rotateApiKey" | "revokeApiKey" | "listApiKeys"
>;

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
    async createApiKey(req, ctx) {
      const expiresAt = req.expiresAt ? timestampDate(req.expiresAt) : null;
      const created = await accounts.createApiKey(req.companyId, req.name, req.scopes, expiresAt, operatorAuditOf(ctx));
      return { key: apiKeyMessage(created.key), secret: created.secret };
    },
    async rotateApiKey(req, ctx) {
      const rotated = await accounts.rotateApiKey(req.companyId, req.keyId, req.graceHours, operatorAuditOf(ctx));
      return { key: apiKeyMessage(rotated.key), secret: rotated.secret, replaced: apiKeyMessage(rotated.previous) };
    },
    async revokeApiKey(req, ctx) {
      return { key: apiKeyMessage(await accounts.revokeApiKey(req.companyId, req.keyId, operatorAuditOf(ctx))) };
    },
    async listApiKeys(req) {
      return { keys: (await accounts.listApiKeys(req.companyId)).map(apiKeyMessage) };
    },
  };
}
