import { execFile } from "node:child_process";
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A real Postfix instance of the test's own (Debian's /usr/sbin/postfix):
 * main.cf and master.cf in a temporary directory, its queue and data there
 * too, listening on an unprivileged loopback port, relaying every recipient
 * per `transports` (a regexp table: pattern -> `smtp:[127.0.0.1]:port`).
 * Retries are fast (a deferred DSN is retried within seconds).
 */
export interface PostfixInstance {
  readonly port: number;
  readonly dir: string;
  /** The mail log, for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

export const POSTFIX = "/usr/sbin/postfix";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** postfix(1) prints its fatal errors only to a terminal; the mail log has the rest. */
async function postfix(dir: string, command: "start" | "stop" | "check"): Promise<void> {
  await run(POSTFIX, ["-c", path.join(dir, "etc"), command], { timeout: 60_000 });
}

export async function startPostfix(transports: readonly (readonly [pattern: string, nexthop: string])[]): Promise<PostfixInstance> {
  const dir = mkdtempSync(path.join(tmpdir(), "postfix-test-"));
  chmodSync(dir, 0o755);
  for (const sub of ["etc", "queue", "data"]) mkdirSync(path.join(dir, sub));
  // Postfix's data directory belongs to its mail owner.
  const owner = /^postfix:x:(\d+):(\d+):/m.exec(readFileSync("/etc/passwd", "utf8"));
  if (owner) chownSync(path.join(dir, "data"), Number(owner[1]), Number(owner[2]));
  const port = await freePort();
  writeFileSync(
    path.join(dir, "etc", "main.cf"),
    [
      "compatibility_level = 3.6",
      `queue_directory = ${dir}/queue`,
      `data_directory = ${dir}/data`,
      "mail_owner = postfix",
      "setgid_group = postdrop",
      "myhostname = relay.postfix.test",
      "mydomain = postfix.test",
      "myorigin = $myhostname",
      "mydestination =",
      "inet_interfaces = 127.0.0.1",
      "inet_protocols = ipv4",
      "mynetworks = 127.0.0.0/8",
      "relay_domains =",
      "smtpd_relay_restrictions = permit_mynetworks, reject",
      "smtpd_recipient_restrictions = permit_mynetworks, reject",
      `transport_maps = regexp:${dir}/etc/transport`,
      "alias_maps =",
      "alias_database =",
      "local_recipient_maps =",
      `maillog_file_prefixes = ${dir}`,
      `maillog_file = ${dir}/maillog`,
      "smtp_tls_security_level = may",
      "smtp_tls_loglevel = 1",
      "smtpd_tls_security_level = none",
      "smtp_host_lookup = native",
      "disable_dns_lookups = yes",
      // A report our listener answers 451 to comes back quickly.
      "queue_run_delay = 1s",
      "minimal_backoff_time = 1s",
      "maximal_backoff_time = 2s",
      "bounce_queue_lifetime = 1h",
      "smtp_connect_timeout = 5s",
      "",
    ].join("\n"),
  );
  writeFileSync(
    path.join(dir, "etc", "transport"),
    transports.map(([pattern, nexthop]) => `${pattern} ${nexthop}`).join("\n") + "\n",
  );
  const service = (name: string, type: string, priv: string, wakeup: string, limit: string, command: string) =>
    `${name} ${type} ${priv} - n ${wakeup} ${limit} ${command}`;
  writeFileSync(
    path.join(dir, "etc", "master.cf"),
    [
      `127.0.0.1:${port} inet n - n - - smtpd`,
      service("pickup", "unix", "n", "60", "1", "pickup"),
      service("cleanup", "unix", "n", "-", "0", "cleanup"),
      service("qmgr", "unix", "n", "300", "1", "qmgr"),
      service("tlsmgr", "unix", "-", "1000?", "1", "tlsmgr"),
      service("rewrite", "unix", "-", "-", "-", "trivial-rewrite"),
      service("bounce", "unix", "-", "-", "0", "bounce"),
      service("defer", "unix", "-", "-", "0", "bounce"),
      service("trace", "unix", "-", "-", "0", "bounce"),
      service("verify", "unix", "-", "-", "1", "verify"),
      service("flush", "unix", "n", "1000?", "0", "flush"),
      service("proxymap", "unix", "-", "-", "-", "proxymap"),
      service("smtp", "unix", "-", "-", "-", "smtp"),
      service("relay", "unix", "-", "-", "-", "smtp"),
      service("showq", "unix", "n", "-", "-", "showq"),
      service("error", "unix", "-", "-", "-", "error"),
      service("retry", "unix", "-", "-", "-", "error"),
      service("discard", "unix", "-", "-", "-", "discard"),
      service("anvil", "unix", "-", "-", "1", "anvil"),
      service("scache", "unix", "-", "-", "1", "scache"),
      service("postlog", "unix-dgram", "n", "-", "1", "postlogd"),
      "",
    ].join("\n"),
  );
  const log = () => {
    try {
      return readFileSync(path.join(dir, "maillog"), "utf8");
    } catch {
      return "(no mail log)";
    }
  };
  try {
    await postfix(dir, "start");
  } catch (error) {
    throw new Error(`postfix did not start: ${String(error)}\n${log()}`, { cause: error });
  }
  return {
    port,
    dir,
    log,
    async stop() {
      await postfix(dir, "stop").catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
