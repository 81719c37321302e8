/**
 * Preloaded into a process of the service (node --import) by
 * bench/hot-path/handoff-statements.ts: counts every statement the process
 * sends to PostgreSQL, through either copy of `pg` (ours and MikroORM's),
 * and how many of them open a transaction. SIGUSR2 writes the counts so far
 * as JSON to $HOTPATH_COUNT_FILE, by statement text (first 90 characters).
 */
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

interface Counted {
  statements: number;
  transactions: number;
  byText: Record<string, number>;
}

const counts: Counted = { statements: 0, transactions: 0, byText: {} };
const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

function textOf(query: unknown): string {
  if (typeof query === "string") return query;
  if (query && typeof query === "object" && "text" in query && typeof query.text === "string") return query.text;
  return "(unknown)";
}

function patch(pgPath: string): void {
  let Client: { prototype: { query: (...args: unknown[]) => unknown } };
  try {
    Client = (require(pgPath) as { Client: typeof Client }).Client;
  } catch {
    return;
  }
  const original = Client.prototype.query;
  Client.prototype.query = function counted(this: unknown, ...args: unknown[]) {
    const text = textOf(args[0]).replace(/\s+/g, " ").trim();
    counts.statements++;
    if (/^(begin|start transaction)/i.test(text)) counts.transactions++;
    const key = text.slice(0, 90);
    counts.byText[key] = (counts.byText[key] ?? 0) + 1;
    return original.apply(this, args);
  };
}

patch(path.join(root, "node_modules/pg"));
patch(path.join(root, "node_modules/@mikro-orm/postgresql/node_modules/pg"));

process.on("SIGUSR2", () => {
  writeFileSync(process.env.HOTPATH_COUNT_FILE ?? `statements-${process.pid}.json`, JSON.stringify(counts, null, 2));
});
