const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether `value` is a UUID (any case): ids that are not can name no row,
 * and are answered before PostgreSQL's uuid cast would fail the statement.
 */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
