import { access } from "node:fs/promises";

/**
 * Debian's Chromium, driven by playwright-core in the browser tests.
 * Without the background-networking flags it keeps dialling Google's hosts,
 * which this machine's closed network refuses.
 */
export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** True when the run is CI's (`CI=true bash .ci/run`): a missing real part fails there, it is never skipped. */
export function inCi(): boolean {
  const ci = (process.env.CI ?? "").toLowerCase();
  return ci !== "" && ci !== "0" && ci !== "false";
}

/**
 * Whether a real program a test needs (Chromium, Postfix, ...) is installed.
 * In CI a missing one throws, so the test file fails with the reason instead of
 * being skipped; elsewhere the test is skipped and says which and how to
 * install it (.ci/run does).
 */
export async function realPartAvailable(part: { path: string; install: string }, skippedTest: string): Promise<boolean> {
  const installed = await access(part.path).then(
    () => true,
    () => false,
  );
  if (installed) return true;
  const why = `${part.path} is missing (${part.install})`;
  if (inCi()) throw new Error(`${skippedTest} needs ${why}; in CI a missing real part fails the run instead of skipping it`);
  console.warn(`skipping ${skippedTest}: ${why}`);
  return false;
}

/** Whether Chromium is installed; see realPartAvailable (fails in CI, skips elsewhere saying so). */
export function chromiumAvailable(skippedTest: string): Promise<boolean> {
  return realPartAvailable({ path: CHROMIUM, install: "apt-get update && apt-get install -y chromium" }, skippedTest);
}
