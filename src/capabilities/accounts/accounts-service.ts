import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { API_KEY_SCOPES } from "./scopes.ts";
import { generateApiKey, hashApiKey } from "./api-keys.ts";
import type { AuditContext } from "../audit/types.ts";
import type { AccountsStore, ApiKeyRecord, ApiKeyReplacement, CompanyRecord, KeyAuditNote, NewApiKey } from "./ports.ts";
import type { CompanyEntitlements } from "./types.ts";
import { validEntitlements, validExpiry, validGraceHours, validName, validScopes } from "./validation.ts";
import { apiKeyView, companyView, keyStatus, type ApiKeyView, type CompanyView } from "./views.ts";

export interface AccountsServiceOptions {
  readonly store: AccountsStore;
  readonly apiKeyPrefix: string;
  readonly apiKeyPepper: string;
  /** Default grace of a rotated key (config.keyRotationGraceHours). */
  readonly keyRotationGraceHours: number;
  readonly clock: () => Date;
  /**
   * Told after every change that may refuse a key (revocation, rotation,
   * entitlements), whatever its outcome: the process's cached key lookups
   * go at once (CachedApiKeyCredentials), before the change is answered.
   */
  readonly onCredentialsChanged?: () => void;
  /**
   * Called before a change of keys or entitlements; the promise it answers
   * settles when the change feed has heard a change (or after a short bound).
   * The change is answered only then, so every API process's cache has been
   * told before the caller can make its next call anywhere.
   */
  readonly changeHeard?: () => Promise<void>;
}

/** A new key. `secret` is the full key: shown to its creator once, stored nowhere. */
export interface CreatedApiKey {
  readonly key: ApiKeyView;
  readonly secret: string;
}

/** The outcome of a rotation: the successor (with its secret) and the replaced key. */
export interface RotatedApiKey extends CreatedApiKey {
  readonly previous: ApiKeyView;
}

const HOUR_MS = 3_600_000;

/** A company's own key administration (ApiKeysService): who acts, for which company. */
export interface KeyAdminCommand {
  readonly companyId: string;
  /** The acting principal, for the audit log and `createdBy`. */
  readonly audit: AuditContext;
}

/** A change that yields a secret: the scopes the caller may put on a key (grantableScopes); others answer 403 FORBIDDEN. */
export interface SecretMintingCommand extends KeyAdminCommand {
  readonly grantableScopes: readonly string[];
}

export interface CreateApiKeyCommand extends SecretMintingCommand {
  readonly name: string;
  readonly scopes: readonly string[];
  readonly expiresAt?: Date | null | undefined;
}

export interface RotateApiKeyCommand extends SecretMintingCommand {
  readonly keyId: string;
  readonly graceHours?: number | undefined;
}

export interface RevokeApiKeyCommand extends KeyAdminCommand {
  readonly keyId: string;
}

/**
 * Companies and their API keys (administration: AdminService, mailctl).
 * Every key operation takes the company id first: a key of another company
 * is NOT_FOUND.
 */
export class AccountsService {
  readonly #options: AccountsServiceOptions;
  readonly #store: AccountsStore;

  constructor(options: AccountsServiceOptions) {
    this.#options = options;
    this.#store = options.store;
  }

  async createCompany(name: string, entitlements: Partial<CompanyEntitlements> = {}): Promise<CompanyView> {
    const companyName = validName("name", name);
    const ent = validEntitlements("entitlements", entitlements);
    const company = await this.#store.createCompany({
      name: companyName,
      entitlements: { api: ent.api ?? true, smtp: ent.smtp ?? false },
    });
    return companyView(company);
  }

  async getCompany(companyId: string): Promise<CompanyView> {
    return companyView(await this.#requireCompany(companyId));
  }

  /** Operator only: every company, oldest first. */
  async listCompanies(): Promise<CompanyView[]> {
    const companies = await this.#store.listCompanies();
    return companies.map(companyView);
  }

  /** Changes the given entitlements; the others keep their value. */
  async setEntitlements(companyId: string, entitlements: Partial<CompanyEntitlements>): Promise<CompanyView> {
    const ent = validEntitlements("entitlements", entitlements);
    const company = await this.#changingCredentials(() => this.#store.updateEntitlements(companyId, ent));
    if (!company) throw noSuchCompany();
    return companyView(company);
  }

  async createApiKey(
    companyId: string,
    name: string,
    scopes: readonly string[],
    expiresAt?: Date | null,
    audit?: AuditContext,
  ): Promise<CreatedApiKey> {
    const now = this.#options.clock();
    const keyName = validName("name", name);
    const keyScopes = validScopes("scopes", scopes);
    const expiry = validExpiry("expiresAt", expiresAt, now);
    await this.#requireCompany(companyId);
    const createdBy = audit?.actor.label ?? "operator";
    const { key, secret } = this.#newKey({ name: keyName, scopes: keyScopes, expiresAt: expiry, createdBy });
    const note: KeyAuditNote | undefined = audit && { context: audit, action: "api_key.created", details: { name: keyName, scopes: keyScopes, prefix: key.prefix } };
    const created = await this.#store.createApiKey(companyId, key, note);
    return { key: apiKeyView(created, now), secret };
  }

  /** The company's own key creation: only scopes the caller holds. */
  createKey(command: CreateApiKeyCommand): Promise<CreatedApiKey> {
    const keyScopes = validScopes("scopes", command.scopes);
    requireGrantable(keyScopes, command.grantableScopes);
    return this.createApiKey(command.companyId, command.name, keyScopes, command.expiresAt, command.audit);
  }

  /** The company's own rotation: the new secret carries the old key's scopes, so the caller must be able to grant them all. */
  rotateKey(command: RotateApiKeyCommand): Promise<RotatedApiKey> {
    return this.#rotate(command.companyId, command.keyId, command.graceHours, command.audit, command.grantableScopes);
  }

  revokeKey(command: RevokeApiKeyCommand): Promise<ApiKeyView> {
    return this.revokeApiKey(command.companyId, command.keyId, command.audit);
  }

  /**
   * Replaces an active key by a new one with the same name and scopes (and
   * no expiry of its own). The old key keeps working for `graceHours`
   * (default config.keyRotationGraceHours; 0 ends it at once), or until its
   * own expiry if that comes first; afterwards it answers API_KEY_EXPIRED.
   */
  rotateApiKey(companyId: string, keyId: string, graceHours?: number, audit?: AuditContext): Promise<RotatedApiKey> {
    return this.#rotate(companyId, keyId, graceHours, audit, API_KEY_SCOPES);
  }

  async #rotate(companyId: string, keyId: string, graceHours: number | undefined, audit: AuditContext | undefined, grantable: readonly string[]): Promise<RotatedApiKey> {
    const grace = validGraceHours("graceHours", graceHours ?? this.#options.keyRotationGraceHours);
    let secret = "";
    let now = this.#options.clock();
    // The store locks the key: two concurrent rotations of one key cannot both succeed.
    const plan = (old: ApiKeyRecord): ApiKeyReplacement => {
      now = this.#options.clock();
      const status = keyStatus(old, now);
      if (status !== "active") {
        throw new ValidationError([{ field: "keyId", problem: `the key is ${status} and cannot be rotated` }]);
      }
      if (old.replacedById) {
        throw new ValidationError([{ field: "keyId", problem: "the key was already rotated; rotate its successor instead" }]);
      }
      requireGrantable(old.scopes, grantable);
      const fresh = this.#newKey({ name: old.name, scopes: old.scopes, expiresAt: null, createdBy: `${audit?.actor.label ?? "operator"} (rotation of ${old.prefix})` });
      secret = fresh.secret;
      const graceEnd = new Date(now.getTime() + grace * HOUR_MS);
      return {
        successor: fresh.key,
        previousExpiresAt: old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd,
        replacedAt: now,
      };
    };
    const note: KeyAuditNote | undefined = audit && { context: audit, action: "api_key.rotated", details: { graceHours: grace } };
    const replaced = await this.#changingCredentials(() => this.#store.replaceApiKey(companyId, keyId, plan, note));
    if (!replaced) throw noSuchKey();
    return { key: apiKeyView(replaced.successor, now), secret, previous: apiKeyView(replaced.previous, now) };
  }

  /** Revokes a key at once (idempotent: a revoked key keeps its first revocation time). */
  async revokeApiKey(companyId: string, keyId: string, audit?: AuditContext): Promise<ApiKeyView> {
    const now = this.#options.clock();
    const note: KeyAuditNote | undefined = audit && { context: audit, action: "api_key.revoked", details: {} };
    const key = await this.#changingCredentials(() => this.#store.revokeApiKey(companyId, keyId, now, note));
    if (!key) throw noSuchKey();
    return apiKeyView(key, now);
  }

  async getApiKey(companyId: string, keyId: string): Promise<ApiKeyView> {
    const key = await this.#store.findApiKey(companyId, keyId);
    if (!key) throw noSuchKey();
    return apiKeyView(key, this.#options.clock());
  }

  /** The key table of a company, oldest first, revoked and expired keys included. */
  async listApiKeys(companyId: string): Promise<ApiKeyView[]> {
    await this.#requireCompany(companyId);
    const keys: ApiKeyRecord[] = await this.#store.listApiKeys(companyId);
    const now = this.#options.clock();
    return keys.map((key) => apiKeyView(key, now));
  }

  /** Runs a change of keys or entitlements, then drops the process's cached key lookups (even when it failed midway). */
  async #changingCredentials<T>(change: () => Promise<T>): Promise<T> {
    const heard = this.#options.changeHeard?.();
    try {
      const result = await change();
      await heard;
      return result;
    } finally {
      this.#options.onCredentialsChanged?.();
    }
  }

  async #requireCompany(companyId: string): Promise<CompanyRecord> {
    const company = await this.#store.findCompany(companyId);
    if (!company) throw noSuchCompany();
    return company;
  }

  /** A new key's stored form and its secret (shown once, stored nowhere). */
  #newKey(fields: { name: string; scopes: readonly string[]; expiresAt: Date | null; createdBy: string }): { key: NewApiKey; secret: string } {
    const { fullKey, displayPrefix } = generateApiKey(this.#options.apiKeyPrefix);
    return {
      key: { ...fields, prefix: displayPrefix, secretHash: hashApiKey(this.#options.apiKeyPepper, fullKey) },
      secret: fullKey,
    };
  }
}

function noSuchCompany(): ApiError {
  return new ApiError("NOT_FOUND", "No such company.");
}

function noSuchKey(): ApiError {
  return new ApiError("NOT_FOUND", "No such API key.");
}

/** Refuses a key carrying a scope the caller may not grant (grantableScopes). */
function requireGrantable(scopes: readonly string[], grantable: readonly string[]): void {
  const missing = scopes.filter((scope) => !grantable.includes(scope));
  if (missing.length > 0) throw new ApiError("FORBIDDEN", `You cannot grant scopes you do not hold: ${missing.join(", ")}.`);
}
