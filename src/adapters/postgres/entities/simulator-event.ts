import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * An outcome the built-in email simulator will report for a message it
 * accepted (delivered, bounced, complained), recorded with the accepted
 * handoff. Any process's simulator reports it once due (claiming it with a
 * lease under FOR UPDATE SKIP LOCKED), so a worker crash does not lose it.
 * Written and read by raw SQL (../messages/handoff-journal.ts). Table
 * `simulator_event`; the DDL is in
 * ../migrations/Migration20251124173000_simulator_events.ts.
 */
export const SimulatorEventSchema = defineEntity({
  name: "SimulatorEvent",
  tableName: "simulator_event",
  properties: {
    providerEventId: p.text().primary(),
    providerMessageId: p.text(),
    /** Order among the message's events (a delivery before its complaint). */
    position: p.integer(),
    type: p.text().check("type IN ('delivered', 'bounced', 'complained')"),
    detail: p.text().nullable(),
    dueAt: p.datetime(),
    /** Reports that failed so far. */
    attempts: p.integer().default(0),
    /** While set and in the future, a process is reporting it. */
    claimedUntil: p.datetime().nullable(),
    /** Reported, or given up on (`dropped`). */
    doneAt: p.datetime().nullable(),
    dropped: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
  // A unique index, as the migration built it, not a unique constraint: MikroORM
  // makes every non-partial `unique` a constraint and has no structured way
  // to ask for an index. Raw DDL as pg_indexes shows it (compared by name).
  uniques: [
    {
      name: "simulator_event_order_index",
      expression: 'CREATE UNIQUE INDEX simulator_event_order_index ON public.simulator_event USING btree (provider_message_id, "position")',
    },
  ],
  indexes: [{ properties: "dueAt", name: "simulator_event_due_index", where: "done_at IS NULL" }],
});

export type SimulatorEvent = InferEntity<typeof SimulatorEventSchema>;
