/**
 * SQL statements per message, counted in the processes themselves
 * (bench/hot-path/count-statements.ts): N sends through the API, then the
 * count from the first send until every message is `delivered`, split by
 * process and by statement text. Background pollers that run meanwhile are
 * included (amortised over the N messages), as they are in production.
 *
 *   node bench/hot-path/handoff-statements.ts [messages=200] [--by-text]
 */
import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { startTemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { SEND_BODY } from "./load.ts";
import { scratchDatabase, seedSender, serviceEnv, sleep, spawnNode, type Child } from "./stack.ts";

const total = Number(process.argv[2] ?? 200);
const byText = process.argv.includes("--by-text");

interface Counted {
  statements: number;
  transactions: number;
  byText: Record<string, number>;
}

async function snapshot(child: Child, file: string): Promise<Counted> {
  process.kill(child.pid, "SIGUSR2");
  await sleep(500);
  return JSON.parse(readFileSync(file, "utf8")) as Counted;
}

function difference(after: Counted, before: Counted): Counted {
  const texts: Record<string, number> = {};
  for (const [text, n] of Object.entries(after.byText)) {
    const d = n - (before.byText[text] ?? 0);
    if (d > 0) texts[text] = d;
  }
  return { statements: after.statements - before.statements, transactions: after.transactions - before.transactions, byText: texts };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "hotpath-count-"));
  const db = await scratchDatabase();
  const temporal = await startTemporalDevServer({});
  const children: Child[] = [];
  try {
    const seeded = await seedSender(db.url, 1_000_000);
    const env = serviceEnv(db.url, temporal.address, { RUN_WORKER: "false" });
    const counted = (name: string) => ({
      nodeArgs: ["--import", "./bench/hot-path/count-statements.ts"],
      env: { ...env, HOTPATH_COUNT_FILE: path.join(dir, `${name}.json`) },
      label: name,
      quiet: true,
    });
    const api = spawnNode("src/api-main.ts", [], counted("api"));
    children.push(api);
    const apiUrl = await api.waitFor(/API listening: (http:\/\/\S+) /);
    const worker = spawnNode("src/worker-main.ts", [], counted("worker"));
    children.push(worker);
    await worker.waitFor(/^(worker running)/);
    await sleep(3_000);

    const before = { api: await snapshot(api, path.join(dir, "api.json")), worker: await snapshot(worker, path.join(dir, "worker.json")) };
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next++ < total) {
          const response = await fetch(`${apiUrl}/mail/v1/send`, {
            method: "POST",
            headers: { authorization: `Bearer ${seeded.secret}`, "content-type": "application/json" },
            body: SEND_BODY,
          });
          if (response.status !== 202) throw new Error(`send answered ${response.status}: ${await response.text()}`);
        }
      }),
    );
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    for (;;) {
      const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from message where status = 'delivered'`);
      if ((rows[0]?.n ?? 0) >= total) break;
      await sleep(200);
    }
    await client.end();
    const after = { api: await snapshot(api, path.join(dir, "api.json")), worker: await snapshot(worker, path.join(dir, "worker.json")) };
    const perProcess = { api: difference(after.api, before.api), worker: difference(after.worker, before.worker) };
    const statements = perProcess.api.statements + perProcess.worker.statements;
    const transactions = perProcess.api.transactions + perProcess.worker.transactions;
    console.log(`${total} messages, 202 to delivered`);
    for (const [name, counts] of Object.entries(perProcess)) {
      console.log(`${name}: ${(counts.statements / total).toFixed(1)} statements, ${(counts.transactions / total).toFixed(2)} transactions per message`);
      if (byText) {
        for (const [text, n] of Object.entries(counts.byText).sort((a, b) => b[1] - a[1])) {
          console.log(`  ${(n / total).toFixed(2).padStart(6)}  ${text}`);
        }
      }
    }
    console.log(`total: ${(statements / total).toFixed(1)} statements, ${(transactions / total).toFixed(2)} transactions per message`);
  } finally {
    for (const child of children.reverse()) await child.stop();
    await temporal.stop();
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
