const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether `value` can be a row id. Ids come from callers (URLs, admin
 * commands); anything else would make PostgreSQL fail the whole query with
 * "invalid input syntax for type uuid" instead of simply finding nothing.
 */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
