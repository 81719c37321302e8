import { describe, expect, it } from "vitest";
import { judgeClick, judgeOpen, type TrackingRequest } from "../../../src/capabilities/tracking/suspect-rules.ts";
import { HONEYPOT_LINK_ID } from "../../../src/capabilities/tracking/tokens.ts";

const ISSUED = new Date("2026-03-01T10:00:00Z");
const LATER = new Date("2026-03-01T11:00:00Z");
const BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36";

function request(overrides: Partial<TrackingRequest> = {}): TrackingRequest {
  return { method: "GET", userAgent: BROWSER, purpose: undefined, secPurpose: undefined, xMoz: undefined, clientIp: "203.0.113.9", at: LATER, ...overrides };
}

describe("click rules", () => {
  it("a person's click an hour after the handoff is not suspect", () => {
    expect(judgeClick(request(), ISSUED, "aaaaaaaaaaaaaaaa", false, [])).toEqual([]);
  });

  it("each rule on its own", () => {
    expect(judgeClick(request({ at: new Date(ISSUED.getTime() + 9_000) }), ISSUED, "a", false, [])).toEqual(["early"]);
    expect(judgeClick(request({ at: new Date(ISSUED.getTime() + 11_000) }), ISSUED, "a", false, [])).toEqual([]);
    expect(judgeClick(request({ method: "HEAD" }), ISSUED, "a", false, [])).toEqual(["head"]);
    expect(judgeClick(request({ secPurpose: "prefetch;prerender" }), ISSUED, "a", false, [])).toEqual(["prefetch"]);
    expect(judgeClick(request({ purpose: "prefetch" }), ISSUED, "a", false, [])).toEqual(["prefetch"]);
    expect(judgeClick(request({ xMoz: "prefetch" }), ISSUED, "a", false, [])).toEqual(["prefetch"]);
    for (const agent of ["", undefined, "Microsoft Office/16.0 SafeLinks", "Mimecast", "python-requests/2.31", "curl/8.0", "Go-http-client/1.1", "HeadlessChrome/120"]) {
      expect(judgeClick(request({ userAgent: agent }), ISSUED, "a", false, []), String(agent)).toEqual(["scanner-agent"]);
    }
    expect(judgeClick(request(), ISSUED, HONEYPOT_LINK_ID, true, [])).toEqual(["honeypot"]);
    expect(judgeClick(request(), ISSUED, "a", false, [{ linkId: HONEYPOT_LINK_ID, at: new Date(LATER.getTime() - 30_000) }])).toEqual(["honeypot"]);
    expect(judgeClick(request(), ISSUED, "a", false, [{ linkId: HONEYPOT_LINK_ID, at: new Date(LATER.getTime() - 61_000) }])).toEqual([]);
    expect(judgeClick(request(), ISSUED, "a", false, [{ linkId: "b", at: new Date(LATER.getTime() - 400) }])).toEqual(["burst"]);
    // The same link again within the second (a double click) is no burst; another link a second later is none either.
    expect(judgeClick(request(), ISSUED, "a", false, [{ linkId: "a", at: new Date(LATER.getTime() - 400) }])).toEqual([]);
    expect(judgeClick(request(), ISSUED, "a", false, [{ linkId: "b", at: new Date(LATER.getTime() - 1000) }])).toEqual([]);
  });
});

describe("open rules", () => {
  it("a person's open through a mail client or Gmail's image proxy is an open", () => {
    expect(judgeOpen(request(), ISSUED)).toEqual([]);
    expect(judgeOpen(request({ userAgent: "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)" }), ISSUED)).toEqual([]);
  });

  it("Apple Mail Privacy Protection, early, HEAD, prefetch and scanners are machine opens", () => {
    expect(judgeOpen(request({ userAgent: "Mozilla/5.0" }), ISSUED)).toEqual(["apple-privacy-proxy"]);
    expect(judgeOpen(request({ clientIp: "17.58.101.12" }), ISSUED)).toEqual(["apple-privacy-proxy"]);
    expect(judgeOpen(request({ clientIp: "::ffff:17.58.101.12" }), ISSUED)).toEqual(["apple-privacy-proxy"]);
    expect(judgeOpen(request({ at: new Date(ISSUED.getTime() + 2_000) }), ISSUED)).toEqual(["early"]);
    expect(judgeOpen(request({ method: "HEAD" }), ISSUED)).toEqual(["head"]);
    expect(judgeOpen(request({ secPurpose: "prefetch" }), ISSUED)).toEqual(["prefetch"]);
    expect(judgeOpen(request({ userAgent: "Barracuda Sentinel (EE)" }), ISSUED)).toEqual(["scanner-agent"]);
  });
});
