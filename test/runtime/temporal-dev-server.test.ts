import { spawn } from "node:child_process";
import { Connection } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findFreePort, isPortOpen, waitForPort } from "../../src/runtime/ports.ts";
import { SEARCH_ATTRIBUTES } from "../../workflows/search-attributes.ts";
import {
  ensureSearchAttributes,
  findTemporalCli,
  startTemporalDevServer,
  type TemporalDevServer,
} from "../../src/runtime/temporal-dev-server.ts";

/** temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD */
const KEYWORD = 2;

describe("startTemporalDevServer", () => {
  let server: TemporalDevServer | undefined;
  let port: number;
  const lines: string[] = [];

  beforeAll(async () => {
    port = await findFreePort();
    server = await startTemporalDevServer({ port, log: (line) => lines.push(line) });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("listens on the requested port with the Web UI on another", () => {
    expect(server?.address).toBe(`127.0.0.1:${port}`);
    expect(server?.uiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("registers the custom search attributes", async () => {
    const connection = await Connection.connect({ address: server?.address });
    try {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: "default" });
      for (const { name } of SEARCH_ATTRIBUTES) {
        expect(customAttributes?.[name], name).toBe(KEYWORD);
      }
    } finally {
      await connection.close();
    }
  });

  it("ensureSearchAttributes is a no-op when they are all there", async () => {
    if (!server) throw new Error("server did not start");
    await ensureSearchAttributes(server.address, "default");
    await ensureSearchAttributes(server.address, "default");
  });

  it("serves the Web UI", async () => {
    const response = await fetch(server?.uiUrl ?? "");
    expect(response.status).toBe(200);
  });

  it("stop() ends the server and frees the port", async () => {
    await server?.stop();
    expect(await isPortOpen("127.0.0.1", port)).toBe(false);
    // A second stop() is harmless (afterAll calls it again).
    await server?.stop();
  });
});

describe("ensureSearchAttributes", () => {
  it("registers the custom search attributes on a server that lacks them", async () => {
    const cli = await findTemporalCli();
    if (!cli) throw new Error("Temporal CLI not found (set TEMPORAL_CLI_PATH)");
    const port = await findFreePort();
    // A plain dev server, as a stand-in for a cluster nobody prepared for us.
    const child = spawn(cli, ["server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", String(port)], {
      stdio: "ignore",
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      const address = `127.0.0.1:${port}`;
      await waitForPort("127.0.0.1", port, Date.now() + 60_000);
      await ensureSearchAttributes(address, "default");
      await ensureSearchAttributes(address, "default");

      const connection = await Connection.connect({ address });
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: "default" });
        for (const { name } of SEARCH_ATTRIBUTES) {
          expect(customAttributes?.[name], name).toBe(KEYWORD);
        }
      } finally {
        await connection.close();
      }
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });
});
