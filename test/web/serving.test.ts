import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_SCREEN_CSP } from "../../src/transport/http/admin-screen.ts";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { ensureAdminScreenBuilt } from "../support/admin-browser.ts";

/**
 * How the service serves the built administration screen under /admin/
 * (issue 20): the CSP on every answer, hashed files cached for a year,
 * index.html revalidated, a missing file 404 in the error shape, and any
 * other page of the screen (a deep link) answered with the app.
 */
const DIST = fileURLToPath(new URL("../../dist/admin/", import.meta.url));
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const NAVIGATION = { headers: { accept: "text/html,application/xhtml+xml", "sec-fetch-mode": "navigate" } };

describe("the administration screen's files", () => {
  let h: ApiHarness;
  let index: string;

  beforeAll(async () => {
    await ensureAdminScreenBuilt();
    index = await readFile(join(DIST, "index.html"), "utf8");
    h = await startApiHarness();
  });
  afterAll(async () => h?.close());

  it("states exactly the CSP of the issue", () => {
    expect(ADMIN_SCREEN_CSP).toBe(CSP);
  });

  it("answers /admin/ and /admin with the app, no-cache, under the CSP", async () => {
    for (const path of ["/admin/", "/admin"]) {
      const response = await h.fetch(path, NAVIGATION);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/html/);
      expect(response.headers.get("cache-control")).toBe("no-cache");
      expect(response.headers.get("content-security-policy")).toBe(CSP);
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(await response.text()).toBe(index);
    }
  });

  it("answers a deep link of the screen (and the sign-in page) with the app", async () => {
    for (const path of ["/admin/messages/0b8f1f9e-3c2a-4c53-9a3e-6f5a2d1c0e11", "/admin/sign-in", "/admin/messages?status=sent&q=ada", "/admin/no/such/page"]) {
      const response = await h.fetch(path, NAVIGATION);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-security-policy")).toBe(CSP);
      expect(response.headers.get("cache-control")).toBe("no-cache");
      expect(await response.text()).toBe(index);
    }
  });

  it("serves the hashed files immutable for a year", async () => {
    const assets = await readdir(join(DIST, "assets"));
    const script = assets.find((name) => name.endsWith(".js"));
    const style = assets.find((name) => name.endsWith(".css"));
    expect(script && style).toBeTruthy();
    for (const name of [script, style]) {
      const response = await h.fetch(`/admin/assets/${name}`);
      expect(response.status, name).toBe(200);
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(response.headers.get("content-security-policy")).toBe(CSP);
      expect(response.headers.get("content-type")).toMatch(name?.endsWith(".js") ? /javascript/ : /text\/css/);
      expect(Buffer.from(await response.arrayBuffer()).equals(await readFile(join(DIST, "assets", name ?? "")))).toBe(true);
    }
  });

  it("answers 404 in the error shape for a missing file, even when a browser navigates to it", async () => {
    for (const [path, init] of [
      ["/admin/assets/index-missing.js", {}],
      ["/admin/assets/index-missing.js", NAVIGATION],
      ["/admin/logo.png", {}],
      ["/admin/messages", { headers: { accept: "application/json", "sec-fetch-mode": "cors" } }],
    ] as const) {
      const response = await h.fetch(path, init);
      expect(response.status, path).toBe(404);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(response.headers.get("content-security-policy")).toBe(CSP);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("NOT_FOUND");
    }
  });

  it("has no inline script or style and no third-party host in the app page", () => {
    expect(index).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(index).not.toMatch(/<style|style="/);
    const urls = [...index.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? "");
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) expect(url, url).toMatch(/^(\/admin\/assets\/|data:)/);
  });

  it("leaves the API's own routes and errors as they were", async () => {
    const response = await h.fetch("/administration");
    expect(response.status).toBe(404);
    expect(response.headers.get("content-security-policy")).toBeNull();
  });
});
