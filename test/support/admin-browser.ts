import { spawnSync } from "node:child_process";
import { mkdir, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, type BrowserContext, chromium, type ConsoleMessage, type Page } from "playwright-core";
import type { Config } from "../../src/config.ts";
import { MemberRole, MembersService } from "../../src/gen/mail/v1/members_pb.js";
import type { ApiHarnessOptions } from "./api-harness.ts";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "./sending-harness.ts";

/**
 * The end-to-end harness of the administration screen (issue 20): the real
 * service (PostgreSQL, a Temporal dev server, the simulator) serving the
 * built screen under /admin/, and headless Chromium (playwright-core) signed
 * in from a one-time link the way a member is.
 *
 * Every page opened through it is guarded: a `securitypolicyviolation`, an
 * uncaught error, a console error, or an RPC answering 4xx/5xx that the test
 * did not announce (expectFailedCalls) is recorded, and `checkPage` /
 * `assertClean` fail on it. `checkPage` also runs axe (no violation allowed)
 * and saves screenshots, light and dark, 1280 and 390 px wide (where nothing
 * may need a sideways scroll), under test-output/admin-screen/; `checkPhone`
 * looks closer at 390 px: each list's key columns and the sections menu.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUILT_INDEX = join(ROOT, "dist/admin/index.html");
export const SCREENSHOTS_DIR = join(ROOT, "test-output/admin-screen");

/** A phone's width: every page fits it without a sideways scroll. */
export const PHONE_WIDTH = 390;
export const SCREEN_WIDTHS = [1280, PHONE_WIDTH] as const;
export const COLOR_SCHEMES = ["light", "dark"] as const;

export interface MemberInput {
  readonly email: string;
  readonly role?: MemberRole;
  readonly displayName?: string;
}

/** An RPC answer a test expects to fail (e.g. GetMessage of another company's id: 404). */
export interface ExpectedFailure {
  /** The method name, e.g. "GetMessage" (matched against /mail.v1.<Service>/<Method>). */
  readonly rpc: string;
  readonly status: number;
}

export interface ScreenPage {
  readonly page: Page;
  readonly context: BrowserContext;
  /** Opens a path of the screen (relative to /admin, e.g. "/messages?status=sent"). */
  goto(path: string): Promise<void>;
  /** Announces RPC failures the test provokes on purpose; anything else fails assertClean. */
  expectFailedCalls(...failures: ExpectedFailure[]): void;
  /**
   * Announces remote images the test expects the CSP to block inside the
   * message preview (the sandboxed srcdoc frame): the browser logs each
   * block as a console error there, which the guard otherwise counts.
   */
  expectBlockedImages(...urls: string[]): void;
  /** Announces console errors the test provokes on purpose (a page's code that fails to load); any other fails assertClean. */
  expectConsoleErrors(...patterns: RegExp[]): void;
  /** Everything the guard saw that should not happen (CSP violations, console errors, unexpected failed calls). */
  problems(): string[];
  /** RPC calls made so far, as "Service/Method status". */
  calls(): string[];
  close(): Promise<void>;
}

export interface AdminScreen {
  readonly h: SendingHarness;
  readonly browser: Browser;
  /** The screen's origin (the service's HTTP/1.1 listener). */
  readonly origin: string;
  /** A company ready to send: API key with mail.transactional.send and mail.events.read, verified sender, credits. */
  company(options?: { credits?: number }): Promise<ReadySender>;
  /** Invites a new member (owner by default) as the operator and returns a one-time sign-in link's fragment (`#token=...`). */
  signInLink(companyId: string, member: MemberInput): Promise<string>;
  /** A fresh browser (own cookie jar) opened on an unauthenticated page; guarded. */
  openPage(options?: { colorScheme?: "light" | "dark"; width?: number }): Promise<ScreenPage>;
  /** A fresh browser signed in from a link as `member` (invited to the company first); lands on the message log. */
  signIn(companyId: string, member: MemberInput): Promise<ScreenPage>;
  /** Axe (no violation) and the guard (no problem), then screenshots light/dark x 1280/390 as `<name>-<scheme>-<width>.png`. */
  checkPage(screen: ScreenPage, name: string, options?: { axeExclude?: string[] }): Promise<void>;
  /**
   * The page on a phone (390 px), light and dark: nothing needs a sideways
   * scroll, each list's named columns (first row) and actions lie inside the
   * screen, and the sections menu opens; screenshots `<name>-phone-<scheme>.png`.
   */
  checkPhone(screen: ScreenPage, name: string, lists?: readonly PhoneList[]): Promise<void>;
  /** Fails when the guard saw anything (see ScreenPage.problems). */
  assertClean(screen: ScreenPage): void;
  close(): Promise<void>;
}

/** A list <checkPhone> looks at: its region's name, the columns and buttons of its first row that must show. */
export interface PhoneList {
  readonly region: string;
  readonly columns: readonly string[];
  readonly actions?: readonly RegExp[];
}

/** Where a box lies, for the failure message. */
function describeBox(box: { x: number; width: number } | null): string {
  return box ? `${Math.round(box.x)}..${Math.round(box.x + box.width)} px` : "not laid out";
}

/** Fails unless `box` is laid out and lies inside 0..PHONE_WIDTH. */
function insidePhone(what: string, box: { x: number; width: number; height: number } | null): void {
  if (!box || box.width <= 0 || box.height <= 0 || box.x < 0 || box.x + box.width > PHONE_WIDTH) {
    throw new Error(`${what} is not inside the ${PHONE_WIDTH} px screen: ${describeBox(box)}`);
  }
}

/** Axe finds nothing on the page as it is now. */
async function noAxeViolations(page: Page, what: string, exclude: readonly string[] = []): Promise<void> {
  // The only frame of the screen is the message preview (sandbox="", no scripts): the email's own HTML, not
  // the screen's, and closed to axe's script (axe waits on it forever). The tests check its title themselves.
  let axe = new AxeBuilder({ page }).options({ iframes: false }).exclude("iframe[sandbox]");
  for (const selector of exclude) axe = axe.exclude(selector);
  const { violations } = await axe.analyze();
  const found = violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  if (found.length > 0) throw new Error(`axe found violations on ${what}:\n${found.join("\n")}`);
}

/** Nothing on the page needs a sideways scroll at PHONE_WIDTH. */
async function fitsPhone(page: Page, name: string): Promise<void> {
  const scrollWidth = await page.evaluate("document.scrollingElement.scrollWidth");
  if (typeof scrollWidth !== "number" || scrollWidth > PHONE_WIDTH) throw new Error(`${name}: the page is ${String(scrollWidth)} px wide at ${PHONE_WIDTH} px`);
}

async function checkPhoneLayout(page: Page, name: string, lists: readonly PhoneList[]): Promise<void> {
  await fitsPhone(page, name);
  for (const list of lists) {
    const region = page.getByRole("region", { name: list.region, exact: true });
    const sideways = await region.evaluate((element) => {
      const box = element as unknown as { scrollWidth: number; clientWidth: number };
      return box.scrollWidth - box.clientWidth;
    });
    if (sideways > 0) throw new Error(`${name}: the list "${list.region}" scrolls sideways by ${sideways} px`);
    const row = region.locator("tbody tr").first();
    for (const column of list.columns) {
      const cell = row.locator(`[data-label="${column}"] > *`).first();
      if (!(await cell.isVisible())) throw new Error(`${name}: the column ${column} of "${list.region}" is not visible`);
      insidePhone(`${name}: the column ${column} of "${list.region}"`, await cell.boundingBox());
    }
    for (const action of list.actions ?? []) {
      const button = row.getByRole("button", { name: action }).first();
      if (!(await button.isVisible())) throw new Error(`${name}: the action ${String(action)} of "${list.region}" is not visible`);
      insidePhone(`${name}: the action ${String(action)} of "${list.region}"`, await button.boundingBox());
    }
  }
  // The sections: behind the menu button, every one inside the screen once it is open.
  const nav = page.getByRole("navigation", { name: "Sections" });
  const menu = nav.getByRole("button", { name: /^Menu/ });
  insidePhone(`${name}: the menu button`, await menu.boundingBox());
  await menu.click();
  for (const link of await nav.getByRole("link").all()) {
    if (!(await link.isVisible())) throw new Error(`${name}: the section ${String(await link.textContent())} is hidden with the menu open`);
    insidePhone(`${name}: the section ${String(await link.textContent())}`, await link.boundingBox());
  }
  await page.keyboard.press("Escape");
  if ((await menu.getAttribute("aria-expanded")) !== "false") throw new Error(`${name}: Escape did not close the menu`);
}

/** The newest modification time under `dir` (files only). */
async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const { mtimeMs } = await stat(join(entry.parentPath, entry.name));
    newest = Math.max(newest, mtimeMs);
  }
  return newest;
}

async function builtIsCurrent(): Promise<boolean> {
  const built = await stat(BUILT_INDEX).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  if (built === 0) return false;
  const sources = Math.max(await newestMtime(join(ROOT, "web")), await newestMtime(join(ROOT, "src/gen")));
  return built >= sources;
}

/**
 * Builds the screen (npm run build:admin) unless dist/admin is newer than
 * every file of web/ and src/gen. One build at a time across test files (a
 * lock directory); a waiting file finds the build done.
 */
export async function ensureAdminScreenBuilt(): Promise<void> {
  if (await builtIsCurrent()) return;
  const lock = join(ROOT, "dist/.admin-build.lock");
  await mkdir(join(ROOT, "dist"), { recursive: true });
  const deadline = Date.now() + 180_000;
  for (;;) {
    const locked = await mkdir(lock).then(
      () => true,
      () => false,
    );
    if (locked) break;
    // A lock older than the build could ever take was left by a killed run.
    const age = await stat(lock).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (age > 120_000) await rm(lock, { recursive: true, force: true });
    if (Date.now() > deadline) throw new Error(`the administration screen's build lock ${lock} was never released`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  try {
    if (await builtIsCurrent()) return;
    const built = spawnSync(process.execPath, [join(ROOT, "node_modules/vite/bin/vite.js"), "build", "--config", "web/vite.config.ts", "--logLevel", "warn"], {
      cwd: ROOT,
      // vitest sets NODE_ENV=test; the screen is tested as it ships (React's production build).
      env: { ...process.env, NODE_ENV: "production" },
      encoding: "utf8",
      timeout: 170_000,
    });
    if (built.status !== 0) throw new Error(`npm run build:admin failed:\n${built.stdout}\n${built.stderr}`);
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

const RPC_PATH = /\/mail\.v1\.(\w+)\/(\w+)$/;

function guard(page: Page, context: BrowserContext, origin: string): ScreenPage {
  const problems: string[] = [];
  const calls: string[] = [];
  const expected: ExpectedFailure[] = [];
  const failedRpcUrls = new Set<string>();
  const blockedImages = new Set<string>();
  const expectedConsoleErrors: RegExp[] = [];

  page.on("response", (response) => {
    const match = RPC_PATH.exec(new URL(response.url()).pathname);
    if (!match) return;
    const [, service, method] = match;
    const status = response.status();
    calls.push(`${service}/${method} ${status}`);
    if (status < 400) return;
    failedRpcUrls.add(response.url());
    if (!expected.some((e) => e.rpc === method && e.status === status)) problems.push(`unexpected failed call ${service}/${method}: HTTP ${status}`);
  });
  page.on("console", (message: ConsoleMessage) => {
    if (message.type() !== "error") return;
    const text = message.text();
    // The browser logs every failed fetch; RPC failures are judged above (expected or not).
    if (text.startsWith("Failed to load resource") && failedRpcUrls.has(message.location().url)) return;
    // The harness's own init script (the violation watcher) is offered to every frame; the message preview's
    // sandbox (no allow-scripts) refuses it, as it refuses any script: the sandbox working, not a fault of the page.
    if (message.location().url === "about:srcdoc" && text.startsWith("Blocked script execution in 'about:srcdoc' because the document's frame is sandboxed")) return;
    const blocked = /^Loading the image '([^']+)' violates the following Content Security Policy directive: "img-src 'self' data:"/.exec(text);
    if (blocked && message.location().url === "about:srcdoc" && blockedImages.has(blocked[1] ?? "")) return;
    if (expectedConsoleErrors.some((pattern) => pattern.test(text))) return;
    problems.push(`console error: ${text} (${message.location().url})`);
  });
  page.on("pageerror", (error) => problems.push(`uncaught error: ${error.message}`));
  return {
    page,
    context,
    async goto(path) {
      await page.goto(`${origin}/admin${path.startsWith("/") ? path : `/${path}`}`);
    },
    expectFailedCalls(...failures) {
      expected.push(...failures);
    },
    expectBlockedImages(...urls) {
      for (const url of urls) blockedImages.add(url);
    },
    expectConsoleErrors(...patterns) {
      expectedConsoleErrors.push(...patterns);
    },
    problems: () => [...problems],
    calls: () => [...calls],
    close: () => context.close(),
  };
}

/** Reports every CSP violation of the page (and of same-origin frames) to the test, before any script of the page runs. */
async function watchViolations(context: BrowserContext, problems: (text: string) => void): Promise<void> {
  await context.exposeBinding("__reportSecurityPolicyViolation", (_source, text: string) => problems(text));
  // Browser code, as text: this project's TypeScript has no DOM types.
  await context.addInitScript({
    content: `document.addEventListener("securitypolicyviolation", (event) => {
      window.__reportSecurityPolicyViolation("securitypolicyviolation: " + event.violatedDirective + " blocked " + (event.blockedURI || "(inline)") + " at " + event.sourceFile + ":" + event.lineNumber);
    });`,
  });
}

export async function startAdminScreen(overrides: Partial<Config> = {}, options: ApiHarnessOptions = {}): Promise<AdminScreen> {
  await ensureAdminScreenBuilt();
  const h = await startSendingHarness(overrides, undefined, options);
  let browser: Browser;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  } catch (error) {
    await h.close();
    throw error;
  }
  const origin = h.app.httpUrl;
  const pages = new Set<ScreenPage>();

  const openPage: AdminScreen["openPage"] = async ({ colorScheme = "light", width = 1280 } = {}) => {
    const context = await browser.newContext({ colorScheme, viewport: { width, height: 900 }, locale: "en-GB", timezoneId: "Europe/Berlin" });
    const page = await context.newPage();
    const screen = guard(page, context, origin);
    const problems: string[] = [];
    await watchViolations(context, (text) => problems.push(text));
    const guarded: ScreenPage = { ...screen, problems: () => [...screen.problems(), ...problems] };
    pages.add(guarded);
    return guarded;
  };

  const signInLink: AdminScreen["signInLink"] = async (companyId, member) => {
    const invited = await h.forCompany(MembersService, companyId).inviteMember({
      email: member.email,
      role: member.role ?? MemberRole.OWNER,
      displayName: member.displayName ?? member.email.split("@")[0] ?? "",
    });
    const { signInUrl } = invited.emailed ? await h.admin.createSignInLink({ companyId, email: member.email }) : invited;
    return new URL(signInUrl).hash;
  };

  const assertClean = (screen: ScreenPage) => {
    const problems = screen.problems();
    if (problems.length > 0) throw new Error(`the page had problems:\n${problems.join("\n")}`);
  };

  return {
    h,
    browser,
    origin,
    // Well above the low-balance mark (LOW_CREDITS_THRESHOLD, 100): no banner unless a test asks for few credits.
    company: (companyOptions = {}) => h.readySender({ credits: companyOptions.credits ?? 1000, scopes: ["mail.transactional.send", "mail.events.read"] }),
    signInLink,
    openPage,
    async signIn(companyId, member) {
      const hash = await signInLink(companyId, member);
      const screen = await openPage();
      await screen.page.goto(`${origin}/admin/sign-in${hash}`);
      // The screen's first page is the overview.
      await screen.page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
      if (screen.page.url() !== `${origin}/admin/overview`) throw new Error(`signed in, but the screen shows ${screen.page.url()}`);
      return screen;
    },
    async checkPage(screen, name, checkOptions = {}) {
      const { page } = screen;
      await mkdir(SCREENSHOTS_DIR, { recursive: true });
      const original = page.viewportSize() ?? { width: 1280, height: 900 };
      for (const colorScheme of COLOR_SCHEMES) {
        await page.emulateMedia({ colorScheme });
        for (const width of SCREEN_WIDTHS) {
          await page.setViewportSize({ width, height: 900 });
          await noAxeViolations(page, `${name} (${colorScheme}, ${width} px)`, checkOptions.axeExclude);
          if (width === PHONE_WIDTH) await fitsPhone(page, `${name} (${colorScheme})`);
          await page.screenshot({ path: join(SCREENSHOTS_DIR, `${name}-${colorScheme}-${width}.png`), fullPage: true });
        }
      }
      await page.emulateMedia({ colorScheme: null });
      await page.setViewportSize(original);
      assertClean(screen);
    },
    async checkPhone(screen, name, lists = []) {
      const { page } = screen;
      await mkdir(SCREENSHOTS_DIR, { recursive: true });
      const original = page.viewportSize() ?? { width: 1280, height: 900 };
      for (const colorScheme of COLOR_SCHEMES) {
        await page.emulateMedia({ colorScheme });
        await page.setViewportSize({ width: PHONE_WIDTH, height: 900 });
        await noAxeViolations(page, `${name} (${colorScheme}, ${PHONE_WIDTH} px)`);
        await checkPhoneLayout(page, `${name} (${colorScheme})`, lists);
        await page.screenshot({ path: join(SCREENSHOTS_DIR, `${name}-phone-${colorScheme}.png`), fullPage: true });
      }
      await page.emulateMedia({ colorScheme: null });
      await page.setViewportSize(original);
      assertClean(screen);
    },
    assertClean,
    async close() {
      for (const page of pages) await page.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
      await h.close();
    },
  };
}
