/**
 * Summarises a V8 CPU profile (node --cpu-prof): self time per function
 * (name, file:line), as a share of the busy (non-idle) samples, plus the
 * self time per package / source directory, which shows which layer the
 * time goes to.
 *
 *   node bench/hot-path/profile-summary.ts <file.cpuprofile> [top=25]
 */
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg = "25"] = process.argv.slice(2);
if (!file) throw new Error("usage: profile-summary.ts <file.cpuprofile> [top]");
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const top = Number(topArg);

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMs = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i] as number;
  selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
}

function shortUrl(url: string): string {
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) return url.slice(nm + "node_modules/".length);
  const main = url.indexOf("/work/main/");
  if (main >= 0) return url.slice(main + "/work/main/".length);
  return url.replace(/^file:\/\//, "");
}

/** The package (node_modules/<pkg>), the source directory, node: internals or a V8 state. */
function layerOf(frame: CallFrame): string {
  const url = shortUrl(frame.url);
  if (!frame.url) return `(${frame.functionName || "anonymous"})`;
  if (frame.url.includes("node_modules/")) {
    const parts = url.split("/");
    return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
  }
  if (url.startsWith("node:")) return "node:internals";
  const parts = url.split("/");
  return parts.slice(0, Math.min(3, parts.length - 1)).join("/");
}

const functions = new Map<string, number>();
const layers = new Map<string, number>();
let total = 0;
let idle = 0;
for (const [id, ms] of selfMs) {
  const node = byId.get(id);
  if (!node) continue;
  const frame = node.callFrame;
  if (frame.functionName === "(idle)") {
    idle += ms;
    continue;
  }
  total += ms;
  const name = `${frame.functionName || "(anonymous)"}  ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
  functions.set(name, (functions.get(name) ?? 0) + ms);
  layers.set(layerOf(frame), (layers.get(layerOf(frame)) ?? 0) + ms);
}

function print(title: string, entries: Map<string, number>, limit: number): void {
  console.log(`\n${title}`);
  for (const [name, ms] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, limit)) {
    console.log(`${((ms / total) * 100).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(7)} ms  ${name}`);
  }
}

console.log(`${file}: ${total.toFixed(0)} ms busy, ${idle.toFixed(0)} ms idle (busy ${((total / (total + idle)) * 100).toFixed(0)}% of the window)`);
print("self time by layer", layers, 20);
print("self time by function", functions, top);

/** `--callers <name>`: where the self time of functions named so comes from (up to 16 frames). */
const callersOf = process.argv.indexOf("--callers");
if (callersOf >= 0) {
  const wanted = process.argv[callersOf + 1] ?? "";
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stacks = new Map<string, number>();
  for (const [id, ms] of selfMs) {
    const node = byId.get(id);
    if (!node || node.callFrame.functionName !== wanted) continue;
    const frames: string[] = [];
    for (let at = parent.get(id); at !== undefined && frames.length < 16; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame) frames.push(`${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`);
    }
    const key = frames.join("\n      <- ");
    stacks.set(key, (stacks.get(key) ?? 0) + ms);
  }
  print(`callers of ${wanted}`, stacks, 8);
}

/** `--inclusive`: total time (self and callees) of each function of this repository (src/, workflows/, bench/). */
if (process.argv.includes("--inclusive")) {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusive = new Map<string, number>();
  for (const [id, ms] of selfMs) {
    if (byId.get(id)?.callFrame.functionName === "(idle)") continue;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame || frame.url.includes("node_modules") || !/\/work\/main\/(src|workflows|bench)\//.test(frame.url)) continue;
      seen.add(`${frame.functionName || "(anonymous)"}  ${shortUrl(frame.url)}:${frame.lineNumber + 1}`);
    }
    for (const name of seen) inclusive.set(name, (inclusive.get(name) ?? 0) + ms);
  }
  print("inclusive time of this repository's functions", inclusive, 40);
}

/** `--share <regex>` (repeatable): the share of busy time spent under a frame whose "name url" matches. */
const shares = process.argv.flatMap((arg, i) => (arg === "--share" ? [process.argv[i + 1] ?? ""] : []));
if (shares.length > 0) {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  console.log("\nshare of busy time under matching frames");
  for (const pattern of shares) {
    const regex = new RegExp(pattern);
    let under = 0;
    for (const [id, ms] of selfMs) {
      if (byId.get(id)?.callFrame.functionName === "(idle)") continue;
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const frame = byId.get(at)?.callFrame;
        if (frame && regex.test(`${frame.functionName} ${frame.url}`)) {
          under += ms;
          break;
        }
      }
    }
    console.log(`${((under / total) * 100).toFixed(1).padStart(5)}%  ${pattern}`);
  }
}
