import ipaddr from "ipaddr.js";
import { HONEYPOT_LINK_ID } from "./tokens.ts";

/**
 * Which clicks look automated (`campaign.click` `suspect: true`) and which
 * opens are a machine's, decided from the request alone and the
 * recipient's recent clicks; docs/tracking.md tells callers. Pure: every
 * rule is tested on its own (test/capabilities/tracking/suspect-rules.test.ts).
 *
 * A click is suspect when any of these holds (its reasons name them):
 *
 * - `early`: it came less than EARLY_CLICK_SECONDS after the copy was
 *   handed over (the token's issue time): link scanners of the receiving
 *   gateway (Microsoft Safe Links, Mimecast, Proofpoint, Barracuda) fetch
 *   every link at delivery, people do not read that fast;
 * - `head`: a HEAD request (a checker, never a browser following a link);
 * - `prefetch`: a `Purpose` / `Sec-Purpose` header saying prefetch or
 *   prerender, or `X-Moz: prefetch` (the browser fetched it ahead, nobody
 *   clicked);
 * - `scanner-agent`: no user agent, or one of the known link scanners,
 *   security gateways, HTTP libraries and headless browsers (SCANNER_AGENTS);
 * - `honeypot`: the recipient followed the copy's hidden link (which no
 *   person sees) within HONEYPOT_WINDOW_SECONDS before;
 * - `burst`: the recipient clicked another link of the campaign within
 *   BURST_WINDOW_MS (a scanner opens every link at once; a person does
 *   one at a time).
 *
 * An open is a machine's when any of these holds:
 *
 * - `early`: within EARLY_OPEN_SECONDS of the handoff (gateways and
 *   prefetching mail servers load images at delivery);
 * - `apple-privacy-proxy`: Apple Mail Privacy Protection, which loads every
 *   image of every message in the background through Apple's proxies,
 *   opened or not: a request from Apple's network 17.0.0.0/8, or with the
 *   bare user agent `Mozilla/5.0` its proxy sends;
 * - `head`, `prefetch`, `scanner-agent`: as for clicks.
 *
 * Image proxies that fetch when the person opens the message (Gmail's
 * GoogleImageProxy, Yahoo's) are opens: the person did open it.
 */
export const EARLY_CLICK_SECONDS = 10;
export const EARLY_OPEN_SECONDS = 3;
export const HONEYPOT_WINDOW_SECONDS = 60;
export const BURST_WINDOW_MS = 1000;

/** Link scanners, security gateways, HTTP libraries and headless browsers, by a word of their user agent. */
export const SCANNER_AGENTS: readonly RegExp[] = [
  /safelinks|microsoft office|ms-office|bingpreview|msoffice/i,
  /mimecast|proofpoint|barracuda|symantec|messagelabs|forcepoint|trendmicro|sophos|fortinet|fortiguard|cisco|ironport|zscaler|checkpoint|avanan|paloalto|vade/i,
  /python-requests|python-urllib|aiohttp|curl\/|wget\/|go-http-client|java\/|okhttp|apache-httpclient|libwww-perl|node-fetch|axios\/|undici|httpclient/i,
  /headlesschrome|phantomjs|puppeteer|playwright|selenium|slurp|crawler|spider|scanner|\bbot\b|bot\//i,
];

export type ClickReason = "early" | "head" | "prefetch" | "scanner-agent" | "honeypot" | "burst";
export type OpenReason = "early" | "head" | "prefetch" | "scanner-agent" | "apple-privacy-proxy";

/** What the HTTP layer saw of a tracking request. */
export interface TrackingRequest {
  readonly method: string;
  readonly userAgent: string | undefined;
  /** `Purpose`, `Sec-Purpose` and `X-Moz` headers, as sent. */
  readonly purpose: string | undefined;
  readonly secPurpose: string | undefined;
  readonly xMoz: string | undefined;
  /** The client's address as the HTTP layer resolved it. */
  readonly clientIp: string;
  readonly at: Date;
}

/** A click of the recipient within the last HONEYPOT_WINDOW_SECONDS, as recorded. */
export interface RecentClick {
  readonly linkId: string;
  readonly at: Date;
}

function isPrefetch(request: TrackingRequest): boolean {
  const said = [request.purpose, request.secPurpose, request.xMoz].filter((v): v is string => v !== undefined).join(",");
  return /prefetch|prerender|preview/i.test(said);
}

function isScannerAgent(userAgent: string | undefined): boolean {
  const agent = userAgent?.trim() ?? "";
  return agent === "" || SCANNER_AGENTS.some((pattern) => pattern.test(agent));
}

/** Apple's network (17.0.0.0/8, also written as IPv4-mapped IPv6), where Mail Privacy Protection's proxies fetch from. */
function isAppleNetwork(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.kind() === "ipv4" && parsed.toString().startsWith("17.");
}

export function judgeClick(request: TrackingRequest, issuedAt: Date, linkId: string, isHoneypot: boolean, recent: readonly RecentClick[]): ClickReason[] {
  const reasons: ClickReason[] = [];
  if (request.at.getTime() - issuedAt.getTime() < EARLY_CLICK_SECONDS * 1000) reasons.push("early");
  if (request.method.toUpperCase() === "HEAD") reasons.push("head");
  if (isPrefetch(request)) reasons.push("prefetch");
  if (isScannerAgent(request.userAgent)) reasons.push("scanner-agent");
  const now = request.at.getTime();
  if (isHoneypot || recent.some((c) => c.linkId === HONEYPOT_LINK_ID && now - c.at.getTime() <= HONEYPOT_WINDOW_SECONDS * 1000)) reasons.push("honeypot");
  if (recent.some((c) => c.linkId !== linkId && c.linkId !== HONEYPOT_LINK_ID && Math.abs(now - c.at.getTime()) < BURST_WINDOW_MS)) reasons.push("burst");
  return reasons;
}

export function judgeOpen(request: TrackingRequest, issuedAt: Date): OpenReason[] {
  const reasons: OpenReason[] = [];
  if (request.at.getTime() - issuedAt.getTime() < EARLY_OPEN_SECONDS * 1000) reasons.push("early");
  if (request.method.toUpperCase() === "HEAD") reasons.push("head");
  if (isPrefetch(request)) reasons.push("prefetch");
  if (isAppleNetwork(request.clientIp) || request.userAgent?.trim() === "Mozilla/5.0") reasons.push("apple-privacy-proxy");
  else if (isScannerAgent(request.userAgent)) reasons.push("scanner-agent");
  return reasons;
}
