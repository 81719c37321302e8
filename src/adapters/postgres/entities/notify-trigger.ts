import type { TriggerDef } from "@mikro-orm/core";

export interface NotifyTriggerOptions {
  readonly table: string;
  readonly name: string;
  /** The LISTEN channel of the processes that act on the change (../change-feed.ts). */
  readonly channel: string;
  readonly events: readonly ("insert" | "update" | "delete")[];
  readonly forEach?: "statement" | "row";
  /** Columns an UPDATE has to name to fire the trigger (`update of ...`); other updates stay silent. */
  readonly updateOf?: readonly string[];
  /** Row triggers only: fires only when this holds. */
  readonly when?: string;
}

/**
 * An AFTER trigger that NOTIFYs `channel` on commit, so every listening
 * process drops what it cached or wakes up. Its PL/pgSQL function is named
 * `<table>_<trigger>_fn`, MikroORM's convention: the schema generator reads
 * that function back with the trigger and drops it with it.
 *
 * MikroORM's structured triggers have no `update of <columns>` (nor does its
 * schema reader see one), so a trigger with `updateOf` is given as raw DDL
 * (`expression`), function included. The comparator matches raw triggers by
 * name only; test/adapters/postgres/schema.test.ts compares their definition
 * with what the migrations built.
 */
export function notifyTrigger(options: NotifyTriggerOptions): TriggerDef {
  const forEach = options.forEach ?? "statement";
  const body = `perform pg_notify('${options.channel}', ''); return null;`;
  const base: TriggerDef = { name: options.name, timing: "after", events: [...options.events], forEach };
  if (!options.updateOf) return { ...base, body, ...(options.when ? { when: options.when } : {}) };
  const fn = `${options.table}_${options.name}_fn`;
  const events = options.events.map((event) => (event === "update" ? `update of ${options.updateOf?.join(", ")}` : event)).join(" or ");
  const when = options.when ? ` when (${options.when})` : "";
  return {
    ...base,
    expression: [
      `create or replace function ${fn}() returns trigger language plpgsql as $$ begin ${body} end; $$;`,
      `create trigger ${options.name} after ${events} on ${options.table} for each ${forEach}${when} execute function ${fn}();`,
    ].join("\n"),
  };
}
