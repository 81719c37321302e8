import { IDEMPOTENT_REPLAYED_HEADER, REQUEST_ID_HEADER, RETRY_AFTER_HEADER } from "../../contract/names.ts";

/**
 * Headers that describe one exchange rather than the answer: protocol
 * framing (content type, compression, gRPC/Connect metadata), the caller's
 * current rate-limit budget, the request id. A replay gets fresh ones, so
 * they are never stored.
 */
const PER_EXCHANGE_PREFIXES = /^(?:content-|connect-|grpc-|x-ratelimit-|accept-|access-control-|trailer-)/;
const PER_EXCHANGE_NAMES = new Set([
  "date",
  RETRY_AFTER_HEADER,
  REQUEST_ID_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  "vary",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
]);

/** The headers of an answer worth keeping for its replays (names in lower case). */
export function storableHeaders(headers: Iterable<readonly [string, string]>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [rawName, value] of headers) {
    const name = rawName.toLowerCase();
    if (PER_EXCHANGE_PREFIXES.test(name) || PER_EXCHANGE_NAMES.has(name)) continue;
    kept[name] = value;
  }
  return kept;
}
