import type { ApiKeyRecord, CompanyRecord } from "./ports.ts";
import type { CompanyEntitlements } from "./types.ts";

/** A company as the accounts service hands it out. */
export interface CompanyView {
  readonly id: string;
  readonly name: string;
  readonly entitlements: CompanyEntitlements;
  readonly createdAt: Date;
}

/**
 * `active`: works. `revoked`: revoked, refused at once. `expired`: past its
 * expiry or the end of its rotation grace. A key in its rotation grace is
 * `active` with `replacedById` set and `expiresAt` at the end of the grace.
 */
export type ApiKeyStatus = "active" | "revoked" | "expired";

/** A row of the key table. The secret is not in it: it is shown once, at creation. */
export interface ApiKeyView {
  readonly id: string;
  readonly companyId: string;
  readonly name: string;
  /** Displayable start of the key, e.g. `tml_a1b2c3d4`. */
  readonly prefix: string;
  readonly scopes: readonly string[];
  readonly status: ApiKeyStatus;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly replacedById: string | null;
  readonly replacedAt: Date | null;
  /** Who created it: a member's email, `operator`, `rotation of <prefix>`; empty when unknown. */
  readonly createdBy: string;
}

export function companyView(company: CompanyRecord): CompanyView {
  return {
    id: company.id,
    name: company.name,
    entitlements: { api: company.entitlements.api, smtp: company.entitlements.smtp },
    createdAt: company.createdAt,
  };
}

export function keyStatus(key: Pick<ApiKeyRecord, "revokedAt" | "expiresAt">, now: Date): ApiKeyStatus {
  if (key.revokedAt) return "revoked";
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return "expired";
  return "active";
}

export function apiKeyView(key: ApiKeyRecord, now: Date): ApiKeyView {
  return {
    id: key.id,
    companyId: key.companyId,
    name: key.name,
    prefix: key.prefix,
    scopes: [...key.scopes],
    status: keyStatus(key, now),
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    expiresAt: key.expiresAt,
    revokedAt: key.revokedAt,
    replacedById: key.replacedById,
    replacedAt: key.replacedAt,
    createdBy: key.createdBy,
  };
}
