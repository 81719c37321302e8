import { startTemporalDevServer, type TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";

/**
 * A Temporal dev server per test file (the CLI's `server start-dev`),
 * in memory unless a data directory is given.
 */
export async function startTestTemporal(options: { port?: number; dataDir?: string } = {}): Promise<TemporalDevServer> {
  return startTemporalDevServer({ ...options });
}
