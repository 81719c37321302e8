/**
 * The SQL side of keyset pages (src/capabilities/shared/paging.ts): a row's
 * position as the cursor codec keeps it, the condition that starts a page
 * after a position, and both applied to a MikroORM query (keysetRows).
 */
import { raw, type QueryBuilder } from "@mikro-orm/postgresql";
import type { KeysetPosition } from "../../capabilities/shared/keyset-cursor.ts";

/**
 * A timestamptz column as position text: UTC with all six fractional
 * digits. A JS Date keeps milliseconds only; a position rounded to them
 * would skip or repeat rows created within the same millisecond.
 */
export function positionText(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/**
 * `(createdColumn, idColumn)` strictly after (`>`, oldest-first lists) or
 * before (`<`, newest-first lists) the position bound to parameters
 * `timeParam` and `idParam` (e.g. `$2`, `$3` or `?`, `?`); the id is a
 * uuid unless `idType` says text (a list keyed by an address).
 */
export function afterPosition(
  createdColumn: string,
  idColumn: string,
  direction: ">" | "<",
  timeParam: string,
  idParam: string,
  idType: "uuid" | "text" = "uuid",
): string {
  return `(${createdColumn}, ${idColumn}) ${direction} (${timeParam}::timestamptz, ${idParam}::${idType})`;
}

/** How a list is ordered for its keyset pages: its time and tie-breaking id columns (aliased), and its direction. */
export interface KeysetOrder {
  /** The timestamptz column, e.g. `m.created_at`. */
  readonly created: string;
  /** The tie-breaking column, e.g. `m.id`; its unaliased name is the row's key that becomes the position's id. */
  readonly id: string;
  /** The id column's type: a uuid, or text (an address). */
  readonly idType?: "uuid" | "text";
  /** `>` for oldest-first lists, `<` for newest-first ones (the query's own order by). */
  readonly direction: ">" | "<";
}

/**
 * Runs one keyset page of a MikroORM query that is already filtered,
 * ordered and limited: selects each row's position (positionText) and,
 * after a position, keeps only the rows strictly past it. Answers the raw
 * rows (map them with `em.map`) with their positions.
 */
export async function keysetRows<Entity extends object, Alias extends string>(
  query: QueryBuilder<Entity, Alias>,
  order: KeysetOrder,
  after: KeysetPosition | null,
): Promise<{ readonly row: Record<string, unknown>; readonly position: KeysetPosition }[]> {
  query.addSelect(raw(`${positionText(order.created)} as position_at`));
  if (after) {
    // A row-value comparison, which the filter syntax has no form for (and which the list's index range needs).
    query.andWhere(raw(afterPosition(order.created, order.id, order.direction, "?", "?", order.idType), [after.createdAt, after.id]));
  }
  const idKey = order.id.slice(order.id.lastIndexOf(".") + 1);
  const rows = await query.execute<(Record<string, unknown> & { position_at: string })[]>("all", false);
  return rows.map(({ position_at, ...row }) => ({ row, position: { createdAt: position_at, id: String(row[idKey]) } }));
}
