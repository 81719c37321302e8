/**
 * Whether an error means "the database cannot serve this now" (saturated,
 * restarting, unreachable, a statement over its time limit) rather than a
 * bug. The API answers those 503 SERVICE_UNAVAILABLE with `retry-after`, so
 * clients retry with the same idempotency key instead of seeing a 500.
 *
 * It looks at what `pg` and MikroORM put on their errors (`code`,
 * `sqlState`, the message of pg-pool's acquire timeout), following `cause`.
 */
const UNAVAILABLE_SQLSTATES = new Set([
  "57014", // query_canceled: statement_timeout
  "53300", // too_many_connections
  "53400", // configuration_limit_exceeded
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, recovering)
  "55P03", // lock_not_available (lock_timeout)
  "40001", // serialization_failure
  "40P01", // deadlock_detected
]);
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
const POOL_MESSAGES = [
  "timeout exceeded when trying to connect", // pg-pool: no connection free in time
  "Connection terminated",
  "Client has encountered a connection error",
  "the database system is starting up",
  "the database system is shutting down",
];

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    if (typeof current !== "object") return false;
    const e = current as { code?: unknown; sqlState?: unknown; message?: unknown; cause?: unknown };
    const state = typeof e.sqlState === "string" ? e.sqlState : typeof e.code === "string" ? e.code : undefined;
    if (state && (UNAVAILABLE_SQLSTATES.has(state) || state.startsWith("08") || NETWORK_CODES.has(state))) return true;
    if (typeof e.message === "string" && POOL_MESSAGES.some((m) => (e.message as string).includes(m))) return true;
    current = e.cause;
  }
  return false;
}
