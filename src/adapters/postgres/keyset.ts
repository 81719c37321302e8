/**
 * The SQL side of keyset pages (src/capabilities/shared/paging.ts): a row's
 * position as the cursor codec keeps it, and the condition that starts a
 * page after a position.
 */

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
 * `timeParam` and `idParam` (e.g. `$2`, `$3` or `?`, `?`).
 */
export function afterPosition(createdColumn: string, idColumn: string, direction: ">" | "<", timeParam: string, idParam: string): string {
  return `(${createdColumn}, ${idColumn}) ${direction} (${timeParam}::timestamptz, ${idParam}::uuid)`;
}
