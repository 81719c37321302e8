import { ApiError } from "../../contract/api-error.ts";
import { REQUEST_ORIGIN_HEADER } from "../http/request-context.ts";

/**
 * The member session's cookie: `__Host-` prefixed (Secure, Path=/,
 * no Domain), HttpOnly, SameSite=Strict. Browsers accept Secure cookies on
 * https:// and on http://localhost / 127.0.0.1, so the screen works in
 * development without TLS; any other plain-http host cannot keep a session.
 */
export const SESSION_COOKIE = "__Host-mail_session";

/** The header naming the company an operator acts for on the operator listener. */
export const COMPANY_HEADER = "x-mail-company-id";

/** Idle timeout in seconds is the server's business; the cookie lives as long as the absolute limit. */
export function sessionCookie(value: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; HttpOnly; Secure; SameSite=Strict`;
}

export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict`;
}

/** The session cookie's value in a Cookie header; undefined when absent. */
export function sessionCookieValue(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The browser rules of every call made with the session cookie (and of the
 * sign-in exchange): Connect protocol only (`Connect-Protocol-Version: 1`, a
 * header no cross-site form can send and that forces a CORS preflight,
 * which we never answer), POST only (never a GET, nor a JSON route's GET,
 * PATCH or DELETE), and an Origin that is ours: PUBLIC_BASE_URL's, or the
 * request's own origin, scheme, host and port alike. Refusals are 403
 * FORBIDDEN, on every listener and HTTP version.
 */
export function checkBrowserCall(header: Headers, requestMethod: string | undefined, allowedOrigins: readonly string[]): void {
  if (requestMethod !== undefined && requestMethod.toUpperCase() !== "POST") {
    throw new ApiError("FORBIDDEN", "Session calls are POST requests of the Connect protocol; other methods are refused.");
  }
  if (header.get("connect-protocol-version") !== "1") {
    throw new ApiError("FORBIDDEN", "Session calls need the header Connect-Protocol-Version: 1 (the Connect protocol).");
  }
  const origin = header.get("origin");
  if (!origin || !originAllowed(origin, header.get(REQUEST_ORIGIN_HEADER), allowedOrigins)) {
    throw new ApiError("FORBIDDEN", "Session calls must come from the administration screen's own origin.");
  }
}

/** The browser's Origin is exactly one we serve: the same scheme, host and port. */
function originAllowed(origin: string, requestOrigin: string | null, allowedOrigins: readonly string[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  // A browser sends the serialised origin; anything else (a path, a default port spelled out) is not one.
  if (parsed.origin !== origin || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) return false;
  return allowedOrigins.includes(parsed.origin) || (!!requestOrigin && parsed.origin === requestOrigin);
}
