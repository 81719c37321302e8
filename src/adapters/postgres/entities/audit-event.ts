import { randomUUID } from "node:crypto";
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * One administrative change of a company: who (`actorKind`, `actor`: a
 * member's email, a key prefix, `operator`), what (`action`, target), when,
 * from where (request id, client address). Never a secret. Written in the
 * change's transaction; kept 400 days. Table `audit_event`.
 */
export const AuditEventSchema = defineEntity({
  name: "AuditEvent",
  tableName: "audit_event",
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()).defaultRaw("gen_random_uuid()"),
    company: () =>
      p.manyToOne(CompanySchema).fieldName("company_id").deleteRule("cascade").foreignKeyName("audit_event_company_id_fkey"),
    occurredAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()").index("audit_event_time_index"),
    actorKind: p.text().check("actor_kind in ('member', 'api_key', 'operator', 'system')"),
    actor: p.text(),
    action: p.text(),
    targetType: p.text(),
    targetId: p.text(),
    requestId: p.text().defaultRaw("''"),
    clientIp: p.text().defaultRaw("''"),
    details: p.json<Record<string, unknown>>().columnType("jsonb").defaultRaw("'{}'"),
  },
  indexes: [{ properties: ["company", "occurredAt", "id"], name: "audit_event_company_time_index" }],
});

export type AuditEvent = InferEntity<typeof AuditEventSchema>;
