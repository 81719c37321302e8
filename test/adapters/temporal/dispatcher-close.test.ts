import { randomUUID } from "node:crypto";
import { Client, Connection } from "@temporalio/client";
import { describe, expect, it } from "vitest";
import { MessageDispatcher } from "../../../src/adapters/temporal/messages/dispatcher.ts";
import { findFreePort } from "../../../src/runtime/ports.ts";

/**
 * A process that shuts down while Temporal is unreachable: the message
 * dispatcher's starts are being retried by the Temporal client (UNAVAILABLE
 * is retried, with waits of up to 5 s) when the client's owner closes the
 * connection. A retry still scheduled then used to throw "Channel has been
 * shut down" from a timer, uncaught (it failed a CI run through
 * test/api/members.test.ts). Each start now has a deadline and close()
 * waits past it, so nothing is left scheduled.
 */
describe("the message dispatcher closing while Temporal is unreachable", () => {
  it("leaves no start retrying after close(): closing the client then throws nothing later", async () => {
    const uncaught: unknown[] = [];
    const record = (error: unknown): void => void uncaught.push(error);
    process.on("uncaughtException", record);
    try {
      // A port nobody listens on: every call fails UNAVAILABLE, and the client retries it.
      const connection = Connection.lazy({ address: `127.0.0.1:${await findFreePort()}` });
      const dispatcher = new MessageDispatcher({
        client: new Client({ connection }),
        taskQueue: "unreachable",
        store: { unstarted: async () => [], markWorkflowStarted: async () => {}, markWorkflowsStarted: async () => {} },
        provider: "simulator",
        handoffTimeoutSeconds: 10,
        log: { warn: () => {} },
        startDeadlineMs: 1_000,
      });
      dispatcher.enqueue({ id: randomUUID(), companyId: randomUUID(), recipientDomain: "example.org" });
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await dispatcher.close();
      await connection.close();
      // Longer than the client's longest wait between two tries.
      await new Promise((resolve) => setTimeout(resolve, 7_000));
      expect(uncaught).toEqual([]);
    } finally {
      process.off("uncaughtException", record);
    }
  }, 60_000);
});
