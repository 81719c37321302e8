/**
 * What the accounts capability needs from storage. The PostgreSQL
 * implementations live in src/adapters/postgres/accounts/.
 *
 * TENANT ISOLATION: every method that touches tenant-owned rows takes the
 * caller's `companyId` first; a key of another company is simply not found.
 * The one exception is `ApiKeyCredentials.findByHash`: the presented key is
 * what tells us the company.
 */
import type { AuditNote } from "../audit/types.ts";
import type { KeysetPosition } from "../shared/keyset-cursor.ts";
import type { Positioned } from "../shared/paging.ts";
import type { CompanyEntitlements } from "./types.ts";

/** An audit row whose target the store fills in (the key it changed). */
export type KeyAuditNote = AuditNote;

/** A company as stored. */
export interface CompanyRecord {
  readonly id: string;
  readonly name: string;
  readonly entitlements: CompanyEntitlements;
  readonly createdAt: Date;
}

/** An API key as stored (without its secret hash). */
export interface ApiKeyRecord {
  readonly id: string;
  readonly companyId: string;
  readonly name: string;
  /** Displayable start of the key, e.g. `tml_a1b2c3d4`. */
  readonly prefix: string;
  readonly scopes: readonly string[];
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly replacedById: string | null;
  readonly replacedAt: Date | null;
  /** Who created it: a member's email, `operator`, `rotation of <prefix>`; empty when unknown. */
  readonly createdBy: string;
}

export interface NewCompany {
  readonly name: string;
  readonly entitlements: CompanyEntitlements;
}

export interface NewApiKey {
  readonly name: string;
  readonly prefix: string;
  /** hashApiKey() of the full key; the key itself is stored nowhere. */
  readonly secretHash: Buffer;
  readonly scopes: readonly string[];
  readonly expiresAt: Date | null;
  readonly createdBy?: string;
}

/** What a rotation writes, decided from the key as it is under the lock. */
export interface ApiKeyReplacement {
  readonly successor: NewApiKey;
  /** The replaced key's new expiry (end of its grace). */
  readonly previousExpiresAt: Date;
  readonly replacedAt: Date;
}

export interface ReplacedApiKey {
  readonly successor: ApiKeyRecord;
  readonly previous: ApiKeyRecord;
}

/** Companies and their keys, for administration. */
export interface AccountsStore {
  createCompany(company: NewCompany): Promise<CompanyRecord>;
  /** Null when there is no such company (ids that cannot be row ids included). */
  findCompany(companyId: string): Promise<CompanyRecord | null>;
  /** Operator only: every company, oldest first. */
  listCompanies(): Promise<CompanyRecord[]>;
  /** Changes the given entitlements, keeps the others; null when there is no such company. */
  updateEntitlements(companyId: string, entitlements: Partial<CompanyEntitlements>): Promise<CompanyRecord | null>;

  /** A new key of an existing company, and its audit row in the same transaction. */
  createApiKey(companyId: string, key: NewApiKey, audit: KeyAuditNote): Promise<ApiKeyRecord>;
  /** The key table of one company, oldest first, strictly after `after` when given; at most `limit` rows. */
  listApiKeys(companyId: string, after: KeysetPosition | null, limit: number): Promise<Positioned<ApiKeyRecord>[]>;
  /**
   * Sets the revocation time of a key unless it has one already (a revoked
   * key keeps its first revocation time); null when there is no such key
   * for that company.
   */
  revokeApiKey(companyId: string, keyId: string, at: Date, audit: KeyAuditNote): Promise<ApiKeyRecord | null>;
  /**
   * Rotation, in one transaction: locks the key (concurrent rotations of one
   * key run one after the other), asks `plan` what to write given the key as
   * it is now, then writes the successor and points the old key at it.
   * Null when there is no such key for that company; an error thrown by
   * `plan` writes nothing.
   */
  replaceApiKey(
    companyId: string,
    keyId: string,
    plan: (current: ApiKeyRecord) => ApiKeyReplacement,
    audit: KeyAuditNote,
  ): Promise<ReplacedApiKey | null>;
}

/** A key found by the hash of a presented secret, with its company. */
export interface KeyCredential {
  readonly id: string;
  readonly name: string;
  readonly prefix: string;
  readonly scopes: readonly string[];
  readonly secretHash: Uint8Array;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly company: { readonly id: string; readonly name: string; readonly entitlements: CompanyEntitlements };
}

/** The lookup behind authentication, done on every request (nothing is cached). */
export interface ApiKeyCredentials {
  findByHash(secretHash: Buffer): Promise<KeyCredential | null>;
}

/** Where batches of "last used" times are written. */
export interface KeyUsageStore {
  /**
   * Writes the times of a batch in one go. A key's "last used" only moves
   * forward: an older time than the stored one changes nothing, so writers
   * in several processes may flush in any order.
   */
  writeLastUsed(batch: ReadonlyMap<string, Date>): Promise<void>;
}
