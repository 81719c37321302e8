import type { FastifyRequest } from "fastify";

/**
 * Request logs without personal data. Fastify logs every request's URL,
 * and URLs carry addresses: `?q=` searches of the message log and
 * `/contacts/{email}` paths. The logged URL keeps its shape (which route,
 * which parameters) and loses the values: every query value becomes
 * `[redacted]` and every path segment that looks like an email address
 * becomes `[email]`.
 */

export const REDACTED_VALUE = "[redacted]";
export const REDACTED_EMAIL = "[email]";

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
}

/** `@` as written or percent-encoded: an address, or close enough to one not to log it. */
function looksLikeEmail(segment: string): boolean {
  return decoded(segment).includes("@");
}

/** The URL as it may be logged. */
export function redactUrl(url: string): string {
  const mark = url.indexOf("?");
  const path = mark === -1 ? url : url.slice(0, mark);
  const safePath = path
    .split("/")
    .map((segment) => (looksLikeEmail(segment) ? REDACTED_EMAIL : segment))
    .join("/");
  if (mark === -1) return safePath;
  const safeQuery = url
    .slice(mark + 1)
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      const name = eq === -1 ? pair : pair.slice(0, eq);
      const safeName = looksLikeEmail(name) ? REDACTED_EMAIL : name;
      return eq === -1 ? safeName : `${safeName}=${REDACTED_VALUE}`;
    })
    .join("&");
  return `${safePath}?${safeQuery}`;
}

/** What a request log line says about the request (Fastify's default fields, URL redacted). */
export type LoggedRequest = Readonly<Record<"method" | "url" | "host" | "remoteAddress", string | undefined>> & {
  readonly remotePort: number | undefined;
};

/** The pino serializer of `req` on both listeners. */
export function redactedRequest(request: FastifyRequest): LoggedRequest {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
