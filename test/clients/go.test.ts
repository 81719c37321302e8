import { execFile } from "node:child_process";
import { access, mkdtemp, rm } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { realPartAvailable } from "../support/chromium.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";

/**
 * The Go client example (clients/go) as a Go developer uses it: `go build`,
 * then the program against the real service's gRPC listener (h2c), with a
 * ready sender's key and with a bad one. Asynchronous child processes only:
 * the service runs in this process and must keep answering while they run.
 */

const root = path.resolve(import.meta.dirname, "../..");
const goModule = path.join(root, "clients", "go");
/** Where .ci/run installs protoc-gen-go and protoc-gen-connect-go. */
const goToolsBin = path.join(homedir(), "go", "bin");
const run = promisify(execFile);

/** `go` on PATH, else the official tarball's place. */
async function findGo(): Promise<string> {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, "go");
    if (await access(candidate).then(() => true, () => false)) return candidate;
  }
  return "/usr/local/go/bin/go";
}

const go = await findGo();
const goInstalled = await realPartAvailable(
  { path: go, install: "install Go >= 1.26 (clients/go/go.mod), e.g. the go.dev tarball in /usr/local/go" },
  "the Go client test",
);
const env = { ...process.env, PATH: [path.dirname(go), goToolsBin, process.env.PATH ?? ""].join(path.delimiter) };

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function sendAndRead(binary: string, url: string, apiKey: string, args: string[]): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(binary, args, { env: { ...env, MAIL_API_URL: url, MAIL_API_KEY: apiKey }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

describe.skipIf(!goInstalled)("the Go client example over gRPC", { timeout: 120_000 }, () => {
  let dir: string;
  let binary: string;
  let h: SendingHarness;
  let sender: ReadySender;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "mail-go-client-"));
    binary = path.join(dir, "send-and-read");
    // A cold module and build cache (CI's first run) compiles connect and protobuf.
    await run(go, ["build", "-o", binary, "./cmd/send-and-read"], { cwd: goModule, env, timeout: 300_000 });
    h = await startSendingHarness();
    sender = await h.readySender();
  }, 420_000);
  afterAll(async () => {
    await h?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("sends one message and reads it back, printing both as JSON", async () => {
    const outcome = await sendAndRead(binary, h.app.grpcUrl, sender.secret, ["-to", "grace@example.com", "-subject", "Sent from Go"]);

    expect(outcome.code, outcome.stderr).toBe(0);
    const printed = JSON.parse(outcome.stdout) as {
      send: { id: string; status: string };
      message: { id: string; recipient: string; subject: string; status: string };
    };
    expect(printed.send.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(printed.send.status).toBe("MESSAGE_STATUS_QUEUED");
    expect(printed.message).toMatchObject({ id: printed.send.id, recipient: "grace@example.com", subject: "Sent from Go" });
    expect(printed.message.status).toMatch(/^MESSAGE_STATUS_[A-Z]+$/);
    // The service holds it for the company behind the key.
    const log = await h.forCompany(MailService, sender.companyId).listMessages({});
    expect(log.items.map((m) => m.id)).toContain(printed.send.id);
  });

  it("exits non-zero with the API's code when the key is unknown", async () => {
    // Shaped like a real key (prefix and length), known to no company: as a revoked key.
    const unknownKey = `${sender.secret.slice(0, -8)}zzzzzzzz`;
    const outcome = await sendAndRead(binary, h.app.grpcUrl, unknownKey, ["-to", "grace@example.com"]);

    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe("");
    const printed = JSON.parse(outcome.stderr) as { error: { code: string; message: string } };
    expect(printed.error.code).toBe("API_KEY_INVALID");
    expect(printed.error.message).not.toBe("");
  });

  it("its generated code is what buf generates from proto/ today", async () => {
    const plugins = await Promise.all(
      ["protoc-gen-go", "protoc-gen-connect-go"].map((plugin) =>
        realPartAvailable({ path: path.join(goToolsBin, plugin), install: "bash .ci/run installs it (pinned) from the Go module proxy" }, "the Go client's generated-code check"),
      ),
    );
    if (plugins.includes(false)) return;
    const check = await run(process.execPath, ["scripts/check-generated.ts", "clients/go/buf.gen.yaml"], { cwd: root, env }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code ?? -1, stderr: error.stderr ?? "" }),
    );
    expect(check.code, check.stderr).toBe(0);
  });
});
