import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";
import { CREDENTIALS_CHANNEL } from "./notify-channels.ts";
import { notifyTrigger } from "./notify-trigger.ts";

/**
 * An API key of a company. Only an HMAC of the full key is stored
 * (`secretHash`); `prefix` is the displayable start (`tml_a1b2c3d4`).
 * A key stops working when revoked (`revokedAt`, immediate) or when
 * `expiresAt` passes (own expiry, or the end of the grace of a rotation, in
 * which case `replacedBy` names the successor).
 */
export const ApiKeySchema = defineEntity({
  name: "ApiKey",
  tableName: "api_key",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () => p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("api_key_company_id_fkey"),
    name: p.text().check("char_length(name) >= 1 AND char_length(name) <= 200"),
    prefix: p.text(),
    secretHash: p.blob(),
    scopes: p.array().columnType("text[]").defaultRaw("'{}'"),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    lastUsedAt: p.datetime().nullable(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    /** The successor of a rotated key. */
    replacedBy: () =>
      p.manyToOne(ApiKeySchema).nullable().fieldName("replaced_by_id").deleteRule("set null").foreignKeyName("api_key_replaced_by_id_fkey"),
    replacedAt: p.datetime().nullable(),
    /** Who created it: a member's email, `operator`, or `rotation of <prefix>`; empty for older keys. */
    createdBy: p.text().defaultRaw("''"),
  },
  // A unique index, as the migration built it, not a unique constraint: MikroORM
  // makes every non-partial `unique` a constraint and has no structured way
  // to ask for an index. Raw DDL as pg_indexes shows it (compared by name).
  uniques: [
    {
      name: "api_key_secret_hash_unique",
      expression: "CREATE UNIQUE INDEX api_key_secret_hash_unique ON public.api_key USING btree (secret_hash)",
    },
  ],
  indexes: [{ properties: ["company", "createdAt"], name: "api_key_company_created_index" }],
  // Tells the API processes' key lookup caches that a key changed (Migration20251125200000_credential_change_notices).
  triggers: [
    notifyTrigger({
      table: "api_key",
      name: "api_key_credentials_changed",
      channel: CREDENTIALS_CHANNEL,
      // Not last_used_at: a key's use changes nothing a cache holds.
      events: ["update", "delete"],
      updateOf: ["company_id", "name", "prefix", "secret_hash", "scopes", "expires_at", "revoked_at"],
    }),
  ],
});

export type ApiKey = InferEntity<typeof ApiKeySchema>;
