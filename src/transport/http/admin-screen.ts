import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../contract/api-error.ts";
import { sendApiError } from "./error-reply.ts";

/**
 * The administration screen: the single-page application built
 * from web/ by `npm run build:admin` into dist/admin, served on the public
 * HTTP listeners under /admin/.
 *
 * - hashed files (/admin/assets/*): `Cache-Control: public, max-age=31536000, immutable`;
 * - index.html: `no-cache` (a new build is picked up at the next visit);
 * - a missing asset, or any path that is not a page navigation: 404 in the error shape;
 * - any other /admin/* navigation (a deep link such as /admin/messages/<id>): the app.
 *
 * Every /admin answer carries the CSP below: scripts, styles and calls from
 * the service's own origin only, no inline script or style, no framing.
 * The screen signs in with the member sessions and calls the
 * company services over Connect like any client; nothing here reads data.
 */
export const ADMIN_SCREEN_PATH = "/admin";

export const ADMIN_SCREEN_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** Where `npm run build:admin` (web/vite.config.ts) writes the built screen. */
export const DEFAULT_ADMIN_SCREEN_ROOT = fileURLToPath(new URL("../../../dist/admin/", import.meta.url));

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": ADMIN_SCREEN_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "x-frame-options": "DENY",
};

const IMMUTABLE = "public, max-age=31536000, immutable";
const ASSETS_PREFIX = `${ADMIN_SCREEN_PATH}/assets/`;

export interface AdminScreenOptions {
  /** The built screen (default: dist/admin of this checkout). */
  readonly root?: string;
}

function pathOf(request: FastifyRequest): string {
  return request.url.split("?")[0] ?? "";
}

/**
 * A page the browser navigates to (an address typed, a link, a reload), as
 * opposed to a script, a stylesheet or an image: those 404 when missing.
 */
function isNavigation(request: FastifyRequest): boolean {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  const path = pathOf(request);
  if (path.startsWith(ASSETS_PREFIX)) return false;
  const last = path.slice(path.lastIndexOf("/") + 1);
  if (/\.[A-Za-z0-9]{1,8}$/.test(last)) return false;
  return request.headers["sec-fetch-mode"] === "navigate" || (request.headers.accept ?? "").includes("text/html");
}

async function sendIndex(root: string | undefined, reply: FastifyReply): Promise<FastifyReply> {
  const html = root ? await readFile(`${root}/index.html`).catch(() => undefined) : undefined;
  if (!html) {
    return sendApiError(reply, new ApiError("SERVICE_UNAVAILABLE", "The administration screen is not built: run `npm run build:admin`."));
  }
  return reply.code(200).type("text/html; charset=utf-8").send(html);
}

/** Registers GET /admin, /admin/* on `app` (a public listener). */
export async function registerAdminScreen(app: FastifyInstance, options: AdminScreenOptions = {}): Promise<void> {
  const configured = options.root ?? DEFAULT_ADMIN_SCREEN_ROOT;
  const root = existsSync(`${configured}/index.html`) ? configured.replace(/\/+$/, "") : undefined;

  await app.register(
    async (scope) => {
      scope.addHook("onRequest", async (_request, reply) => {
        reply.headers(SECURITY_HEADERS);
      });
      // After the common no-store of every answer (request-context.ts): the screen's own caching.
      scope.addHook("onSend", async (request, reply, payload) => {
        if (reply.statusCode === 200 || reply.statusCode === 304) {
          if (pathOf(request).startsWith(ASSETS_PREFIX)) reply.header("cache-control", IMMUTABLE);
          else if (String(reply.getHeader("content-type") ?? "").startsWith("text/html")) reply.header("cache-control", "no-cache");
        }
        return payload;
      });
      scope.setNotFoundHandler(async (request, reply) => {
        if (isNavigation(request)) return sendIndex(root, reply);
        return sendApiError(reply, new ApiError("NOT_FOUND", `No file ${pathOf(request)}.`));
      });
      scope.get("/", async (_request, reply) => sendIndex(root, reply));
      if (!root) return;
      await scope.register(fastifyStatic, {
        root,
        prefix: "/",
        index: false,
        redirect: false,
        dotfiles: "ignore",
        cacheControl: false,
        etag: true,
        lastModified: true,
        decorateReply: false,
      });
    },
    { prefix: ADMIN_SCREEN_PATH },
  );
}
