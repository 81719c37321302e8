import type { Client } from "@temporalio/client";
import type { Pool } from "pg";
import { boundedCall } from "../temporal/client.ts";

/** Cheap calls that prove a dependency answers (GET /readyz, Health/Check). */

/** PostgreSQL: `select 1` through the process's pool. */
export function postgresProbe(poolOf: () => Promise<Pool>): () => Promise<unknown> {
  return async () => (await poolOf()).query("select 1");
}

/**
 * Temporal: the frontend's GetSystemInfo on the shared client (no namespace
 * lookup, no workflow), within `timeoutMs`: the SDK's retries of an
 * unreachable server end with the probe instead of outliving it.
 */
export function temporalProbe(client: Client, timeoutMs = 2000): () => Promise<unknown> {
  return () => boundedCall(client, timeoutMs, () => client.workflowService.getSystemInfo({}));
}
