import { ApiError, ValidationError } from "../../contract/api-error.ts";
import type { AuditContext } from "../audit/types.ts";
import { KeysetPager, UNFILTERED, type Page, type PageRequest } from "../shared/paging.ts";
import { generateApiKey, hashApiKey } from "./api-keys.ts";
import { requireCompany } from "./companies.ts";
import { changingCredentials, type CredentialChangeHooks } from "./credential-changes.ts";
import type { AccountsStore, ApiKeyRecord, ApiKeyReplacement, KeyAuditNote, NewApiKey } from "./ports.ts";
import { validExpiry, validGraceHours, validName, validScopes } from "./validation.ts";
import { apiKeyView, keyStatus, type ApiKeyView } from "./views.ts";

export interface ApiKeysDependencies {
  readonly store: AccountsStore;
  readonly apiKeyPrefix: string;
  readonly apiKeyPepper: string;
  /** Default grace of a rotated key (config.keyRotationGraceHours). */
  readonly keyRotationGraceHours: number;
  /** Signs the key table's cursors (CURSOR_SECRET). */
  readonly cursorSecret: string;
  readonly clock: () => Date;
  /** Revocations and rotations reach the cached key lookups before they are answered (credential-changes.ts). */
  readonly credentialChanges?: CredentialChangeHooks;
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

/** A page of the company's key table, oldest first, revoked and expired keys included. */
export interface ListApiKeysCommand extends PageRequest {
  readonly companyId: string;
}

export type ListApiKeysResult = Page<ApiKeyView>;

/** A change of the company's keys: who acts (the audit log, `createdBy`), for which company. */
export interface KeyChangeCommand {
  readonly companyId: string;
  readonly audit: AuditContext;
}

/** A change that yields a secret: only scopes the caller may grant (principal.ts grantableScopes); others answer 403 FORBIDDEN. */
export interface SecretMintingCommand extends KeyChangeCommand {
  readonly grantableScopes: readonly string[];
}

export interface CreateApiKeyCommand extends SecretMintingCommand {
  readonly name: string;
  readonly scopes: readonly string[];
  readonly expiresAt?: Date | null | undefined;
}

/**
 * Replaces an active key by a new one with the same name and scopes (and no
 * expiry of its own). The old key keeps working for `graceHours` (default
 * config.keyRotationGraceHours; 0 ends it at once), or until its own expiry
 * if that comes first; afterwards it answers API_KEY_EXPIRED. The new
 * secret carries the old key's scopes, so the caller must be able to grant
 * them all.
 */
export interface RotateApiKeyCommand extends SecretMintingCommand {
  readonly keyId: string;
  readonly graceHours?: number | undefined;
}

/** Revokes a key at once (idempotent: a revoked key keeps its first revocation time). */
export interface RevokeApiKeyCommand extends KeyChangeCommand {
  readonly keyId: string;
}

const HOUR_MS = 3_600_000;

/**
 * A company's API keys (ApiKeysService, for its members and operators).
 * Every command names the company: a key of another company is NOT_FOUND.
 */
export class ApiKeys {
  readonly #d: ApiKeysDependencies;
  readonly #pager: KeysetPager;

  constructor(dependencies: ApiKeysDependencies) {
    this.#d = dependencies;
    this.#pager = new KeysetPager(dependencies.cursorSecret, { context: "mail.v1.api-keys.cursor.v1", label: "key table", filters: "parameters" });
  }

  async list(command: ListApiKeysCommand): Promise<ListApiKeysResult> {
    const { companyId } = command;
    const page = await this.#pager.read(companyId, UNFILTERED, command, async (after, limit) => {
      await requireCompany(this.#d.store, companyId);
      return this.#d.store.listApiKeys(companyId, after, limit);
    });
    const now = this.#d.clock();
    return { items: page.items.map((key) => apiKeyView(key, now)), nextCursor: page.nextCursor };
  }

  async create(command: CreateApiKeyCommand): Promise<CreatedApiKey> {
    const now = this.#d.clock();
    const scopes = validScopes("scopes", command.scopes);
    requireGrantable(scopes, command.grantableScopes);
    const name = validName("name", command.name);
    const expiresAt = validExpiry("expiresAt", command.expiresAt, now);
    await requireCompany(this.#d.store, command.companyId);
    const { key, secret } = this.#newKey({ name, scopes, expiresAt, createdBy: command.audit.actor.label });
    const note: KeyAuditNote = { context: command.audit, action: "api_key.created", details: { name, scopes, prefix: key.prefix } };
    const created = await this.#d.store.createApiKey(command.companyId, key, note);
    return { key: apiKeyView(created, now), secret };
  }

  async rotate(command: RotateApiKeyCommand): Promise<RotatedApiKey> {
    const grace = validGraceHours("graceHours", command.graceHours ?? this.#d.keyRotationGraceHours);
    let secret = "";
    let now = this.#d.clock();
    // The store locks the key: two concurrent rotations of one key cannot both succeed.
    const plan = (old: ApiKeyRecord): ApiKeyReplacement => {
      now = this.#d.clock();
      const status = keyStatus(old, now);
      if (status !== "active") {
        throw new ValidationError([{ field: "keyId", problem: `the key is ${status} and cannot be rotated` }]);
      }
      if (old.replacedById) {
        throw new ValidationError([{ field: "keyId", problem: "the key was already rotated; rotate its successor instead" }]);
      }
      requireGrantable(old.scopes, command.grantableScopes);
      const fresh = this.#newKey({ name: old.name, scopes: old.scopes, expiresAt: null, createdBy: `${command.audit.actor.label} (rotation of ${old.prefix})` });
      secret = fresh.secret;
      const graceEnd = new Date(now.getTime() + grace * HOUR_MS);
      return {
        successor: fresh.key,
        previousExpiresAt: old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd,
        replacedAt: now,
      };
    };
    const note: KeyAuditNote = { context: command.audit, action: "api_key.rotated", details: { graceHours: grace } };
    const replaced = await changingCredentials(this.#credentialChanges(), () => this.#d.store.replaceApiKey(command.companyId, command.keyId, plan, note));
    if (!replaced) throw noSuchKey();
    return { key: apiKeyView(replaced.successor, now), secret, previous: apiKeyView(replaced.previous, now) };
  }

  async revoke(command: RevokeApiKeyCommand): Promise<ApiKeyView> {
    const now = this.#d.clock();
    const note: KeyAuditNote = { context: command.audit, action: "api_key.revoked", details: {} };
    const key = await changingCredentials(this.#credentialChanges(), () => this.#d.store.revokeApiKey(command.companyId, command.keyId, now, note));
    if (!key) throw noSuchKey();
    return apiKeyView(key, now);
  }

  #credentialChanges(): CredentialChangeHooks {
    return this.#d.credentialChanges ?? {};
  }

  /** A new key's stored form and its secret (shown once, stored nowhere). */
  #newKey(fields: { name: string; scopes: readonly string[]; expiresAt: Date | null; createdBy: string }): { key: NewApiKey; secret: string } {
    const { fullKey, displayPrefix } = generateApiKey(this.#d.apiKeyPrefix);
    return {
      key: { ...fields, prefix: displayPrefix, secretHash: hashApiKey(this.#d.apiKeyPepper, fullKey) },
      secret: fullKey,
    };
  }
}

function noSuchKey(): ApiError {
  return new ApiError("NOT_FOUND", "No such API key.");
}

/** Refuses a key carrying a scope the caller may not grant (grantableScopes). */
function requireGrantable(scopes: readonly string[], grantable: readonly string[]): void {
  const missing = scopes.filter((scope) => !grantable.includes(scope));
  if (missing.length > 0) throw new ApiError("FORBIDDEN", `You cannot grant scopes you do not hold: ${missing.join(", ")}.`);
}
