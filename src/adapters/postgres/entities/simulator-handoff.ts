import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * The built-in email simulator's durable memory of a final handoff answer:
 * a repeated handoff of the same message (a worker crashed after the
 * handoff, a retried activity) gets the same answer back, whichever process
 * handles it. Transient failures are not recorded, so they are decided
 * afresh. No foreign key to `message`: the simulator stands in for an
 * outside service, which keeps its own records. Table `simulator_handoff`;
 * the DDL is in ../migrations/Migration20251122010000_simulator_journal.ts.
 */
export const SimulatorHandoffSchema = defineEntity({
  name: "SimulatorHandoff",
  tableName: "simulator_handoff",
  properties: {
    messageId: p.uuid().primary(),
    outcome: p.text().check("outcome IN ('accepted', 'rejected')"),
    /** Set when accepted: the id the simulator's events refer to. */
    providerMessageId: p.text().nullable(),
    /** Set when rejected: the reply the simulator gave. */
    reason: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()).defaultRaw("now()"),
  },
});

export type SimulatorHandoff = InferEntity<typeof SimulatorHandoffSchema>;
