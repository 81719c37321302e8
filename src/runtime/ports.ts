/**
 * Small TCP helpers shared by the embedded PostgreSQL and the Temporal dev
 * server: both are child processes that we start on a port of our choosing
 * and must wait for before handing out their address.
 */
import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * A port that was free a moment ago on `host`. The kernel picks it (bind to
 * port 0), so two callers do not race for the same number the way a
 * "try 7233, 7234, …" scan would; a third process can still take it before
 * the child binds, which is accepted here (the child then fails loudly).
 */
export async function findFreePort(host = "127.0.0.1"): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once("error", reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        server.close();
        reject(new Error("could not determine a free TCP port"));
        return;
      }
      const { port } = address;
      server.close((err) => (err ? reject(err) : resolve(port)));
    });
  });
}

/** True when something accepts TCP connections on host:port right now. */
export async function isPortOpen(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port });
    const done = (open: boolean): void => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * Polls until host:port accepts connections. `abort` lets the caller give up
 * early, e.g. when the child process that should listen has already exited.
 */
export async function waitForPort(
  host: string,
  port: number,
  deadline: number,
  abort?: () => Error | undefined,
): Promise<void> {
  for (;;) {
    const failure = abort?.();
    if (failure) throw failure;
    if (await isPortOpen(host, port, 500)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${host}:${port} to accept connections`);
    await sleep(100);
  }
}

/** Polls until nothing accepts connections on host:port, or `deadline` passes (then returns; the caller checks). */
export async function waitForPortClosed(host: string, port: number, deadline: number): Promise<void> {
  while ((await isPortOpen(host, port, 500)) && Date.now() < deadline) await sleep(100);
}
