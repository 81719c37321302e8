import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CompanySchema } from "./company.ts";

/**
 * The sending guard's state of a company (docs/deliverability.md): whether
 * its sending is suspended, why, with the figures that crossed the line, and
 * from when its sends count again once an operator lifted a suspension. The
 * row is created by the first suspension. Written through
 * MikroORM (src/adapters/postgres/deliverability/); a handoff reads it with its
 * message (MessageStore.loadForHandoff).
 */
export const SendingGuardSchema = defineEntity({
  name: "SendingGuard",
  tableName: "sending_guard",
  properties: {
    company: () =>
      p
        .manyToOne(CompanySchema)
        .primary()
        .fieldName("company_id")
        .deleteRule("cascade")
        // The ORM defaults a primary-key relation to ON UPDATE CASCADE; the table has no such rule.
        .updateRule("no action")
        .foreignKeyName("sending_guard_company_id_fkey"),
    /** Set while sending is suspended; null once lifted. */
    suspendedAt: p.datetime().nullable(),
    /** Which rate crossed its line. */
    reason: p.text().nullable().check("reason in ('bounce_rate', 'complaint_rate')"),
    /** The window's figures when it was suspended. */
    sends: p.integer().default(0),
    bounces: p.integer().default(0),
    complaints: p.integer().default(0),
    /** The window then began here (at most 24 hours before the suspension). */
    windowFrom: p.datetime().nullable(),
    /** When an operator last lifted a suspension: sends handed over before it no longer count. */
    liftedAt: p.datetime().nullable(),
  },
});

export type SendingGuard = InferEntity<typeof SendingGuardSchema>;
