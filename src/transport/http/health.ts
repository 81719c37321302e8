import type { FastifyInstance } from "fastify";

/**
 * Health for orchestrators and load balancers, unauthenticated and outside
 * the rate limits:
 *
 * - GET /livez: the process answers (200 {"status":"ok"}); restart it when not;
 * - GET /readyz: start-up is finished and PostgreSQL and Temporal both
 *   answer a cheap call within a short timeout (200), or 503 naming the
 *   check that failed (`startup` while the process is still starting); send
 *   it no traffic meanwhile.
 */

/** One dependency's answer: "ok", or why not. */
export type CheckResult = "ok" | string;

export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, CheckResult>>;
}

/** Asks every dependency; never throws. */
export type Readiness = () => Promise<ReadinessReport>;

/** Resolves `probe` to "ok", or to its failure (a timeout included) as text. */
export async function check(probe: () => Promise<unknown>, timeoutMs: number): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([probe(), timeout]);
    return "ok";
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the named probes in parallel. */
export function readinessOf(probes: Readonly<Record<string, () => Promise<unknown>>>, timeoutMs: number): Readiness {
  return async () => {
    const names = Object.keys(probes);
    const results = await Promise.all(names.map((name) => check(probes[name] as () => Promise<unknown>, timeoutMs)));
    const checks = Object.fromEntries(names.map((name, i) => [name, results[i] as CheckResult]));
    return { ready: results.every((result) => result === "ok"), checks };
  };
}

/**
 * `readiness`, but not ready until `finished()`: the listeners answer while
 * the process starts the rest (the worker, the relays, the inbound
 * listener, npm start's demo data), and whoever waits for a 200 before
 * acting must find all of it running.
 */
export function untilStarted(readiness: Readiness): { readonly readiness: Readiness; finished(): void } {
  let started = false;
  return {
    async readiness() {
      const report = await readiness();
      return started ? report : { ready: false, checks: { ...report.checks, startup: "starting" } };
    },
    finished() {
      started = true;
    },
  };
}

/** Without probes (a transport test), ready. */
const alwaysReady: Readiness = async () => ({ ready: true, checks: {} });

/**
 * `detailed` (the operator listener) says why a check failed; the public
 * listeners say only which one did (error texts name hosts and databases).
 */
export function healthRoutes(app: FastifyInstance, readiness: Readiness = alwaysReady, detailed = false): void {
  app.get("/livez", async (_request, reply) => reply.code(200).send({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    const report = await readiness();
    const checks = detailed
      ? report.checks
      : Object.fromEntries(Object.entries(report.checks).map(([name, result]) => [name, result === "ok" ? "ok" : "failed"]));
    return reply.code(report.ready ? 200 : 503).send({ status: report.ready ? "ok" : "unavailable", checks });
  });
}
