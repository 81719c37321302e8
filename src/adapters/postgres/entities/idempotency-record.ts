import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { ApiKeySchema } from "./api-key.ts";

/**
 * The first answer to a POST sent with an `Idempotency-Key`, per API key.
 * Rows are written by raw SQL only (the atomic claim of
 * PostgresIdempotencyStore); the entity exists so the ORM metadata
 * describes the whole schema.
 *
 * `response` is the protobuf binary of the response message; a stored
 * error answer has `errorCode`/`errorMessage` instead. `createdAt` is the
 * time of the current claim (a reclaimed row gets a new one). `expiresAt` is
 * the end of the claim's lease while `in_progress` (the request deadline plus
 * a margin: a request that died unanswered frees the key then), and the end
 * of the window once `completed`.
 */
export const IdempotencyRecordSchema = defineEntity({
  name: "IdempotencyRecord",
  tableName: "idempotency_record",
  properties: {
    apiKey: () =>
      p
        .manyToOne(ApiKeySchema)
        .primary()
        .fieldName("api_key_id")
        .deleteRule("cascade")
        .foreignKeyName("idempotency_record_api_key_id_fkey"),
    idempotencyKey: p.text().primary(),
    rpc: p.text(),
    requestHash: p.blob(),
    state: p.enum(["in_progress", "completed"]),
    response: p.blob().nullable(),
    responseHeaders: p.json<Record<string, string>>().nullable(),
    errorCode: p.text().nullable(),
    errorMessage: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
    expiresAt: p.datetime(),
  },
  indexes: [{ properties: "expiresAt", name: "idempotency_record_expiry_index" }],
});

export type IdempotencyRecord = InferEntity<typeof IdempotencyRecordSchema>;
