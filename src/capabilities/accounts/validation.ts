import { ValidationError, type FieldProblem } from "../../contract/api-error.ts";
import { API_KEY_SCOPES, isApiKeyScope, type ApiKeyScope } from "./scopes.ts";

/** Names of companies and keys: 1 to 200 characters once trimmed. */
const MAX_NAME = 200;
/** Longest rotation grace accepted: a year. */
const MAX_GRACE_HOURS = 24 * 365;

function fail(field: string, problem: string): never {
  throw new ValidationError([{ field, problem }]);
}

export function validName(field: string, value: unknown): string {
  if (typeof value !== "string") fail(field, "must be a string");
  const name = value.trim();
  // Code points, like PostgreSQL's char_length (the column check).
  const length = [...name].length;
  if (length < 1 || length > MAX_NAME) fail(field, `must be 1 to ${MAX_NAME} characters`);
  return name;
}

/** Known scopes, without duplicates, in the order of API_KEY_SCOPES. */
export function validScopes(field: string, value: unknown): ApiKeyScope[] {
  if (!Array.isArray(value)) fail(field, "must be a list of scopes");
  if (value.length === 0) fail(field, "must name at least one scope");
  const problems: FieldProblem[] = [];
  value.forEach((scope: unknown, i) => {
    if (typeof scope !== "string" || !isApiKeyScope(scope)) {
      problems.push({ field: `${field}[${i}]`, problem: `unknown scope ${JSON.stringify(scope)}; known: ${API_KEY_SCOPES.join(", ")}` });
    }
  });
  if (problems.length > 0) throw new ValidationError(problems);
  const given = new Set<unknown>(value);
  return API_KEY_SCOPES.filter((scope) => given.has(scope));
}

export function validExpiry(field: string, value: Date | null | undefined, now: Date): Date | null {
  if (value === undefined || value === null) return null;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) fail(field, "must be a valid date");
  if (value.getTime() <= now.getTime()) fail(field, "must be in the future");
  return value;
}

export function validGraceHours(field: string, value: number): number {
  if (!Number.isFinite(value) || value < 0 || value > MAX_GRACE_HOURS) fail(field, `must be 0 to ${MAX_GRACE_HOURS} hours`);
  return value;
}

export function validEntitlements(field: string, value: unknown): { api?: boolean; smtp?: boolean } {
  if (typeof value !== "object" || value === null) fail(field, "must be an object");
  const out: { api?: boolean; smtp?: boolean } = {};
  for (const [key, flag] of Object.entries(value)) {
    if (key !== "api" && key !== "smtp") fail(`${field}.${key}`, "unknown entitlement; known: api, smtp");
    if (flag === undefined) continue;
    if (typeof flag !== "boolean") fail(`${field}.${key}`, "must be true or false");
    out[key] = flag;
  }
  return out;
}
