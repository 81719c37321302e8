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

/** Whether Chromium is installed; when not, says which test is skipped and how to install it (.ci/run does). */
export async function chromiumAvailable(skippedTest: string): Promise<boolean> {
  const installed = await access(CHROMIUM).then(
    () => true,
    () => false,
  );
  if (!installed) console.warn(`skipping ${skippedTest}: ${CHROMIUM} is missing (apt-get update && apt-get install -y chromium)`);
  return installed;
}
