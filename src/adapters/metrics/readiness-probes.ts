import type { Client } from "@temporalio/client";
import type { Pool } from "pg";

/** Cheap calls that prove a dependency answers (GET /readyz, Health/Check). */

/** PostgreSQL: `select 1` through the process's pool. */
export function postgresProbe(poolOf: () => Promise<Pool>): () => Promise<unknown> {
  return async () => (await poolOf()).query("select 1");
}

/** Temporal: the frontend's GetSystemInfo on the shared client (no namespace lookup, no workflow). */
export function temporalProbe(client: Client): () => Promise<unknown> {
  return () => client.workflowService.getSystemInfo({});
}
