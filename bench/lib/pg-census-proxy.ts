/**
 * A TCP proxy in front of PostgreSQL that writes down every statement a
 * process runs, whatever its driver or ORM: it reads the frontend half of
 * the wire protocol (simple `Query`, extended `Parse` / `Bind` / `Execute`)
 * and forwards every byte untouched. Used only by the census of
 * bench/run.ts, which restarts the processes without it before measuring
 * anything (the hop costs latency).
 *
 * Plain connections only: a client that asks for TLS gets the server's
 * answer like any other byte, and the census then sees nothing (the bench
 * never asks for TLS on its scratch databases).
 */
import net from "node:net";
import { performance } from "node:perf_hooks";

export interface CensusStatement {
  /** performance.now() when the statement reached the proxy. */
  readonly at: number;
  readonly text: string;
  /** Which client connection sent it (1, 2, ...): a transaction is one connection's BEGIN ... COMMIT. */
  readonly connection: number;
}

export interface CensusProxy {
  /** The database URL to give the process: the target's, pointed at the proxy. */
  readonly url: string;
  readonly statements: CensusStatement[];
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;

/** Reads the frontend messages of one connection as its bytes go by. */
class FrontendReader {
  #buffer: Buffer = Buffer.alloc(0);
  #startup = true;
  readonly #prepared = new Map<string, string>();
  readonly #portals = new Map<string, string>();
  readonly #record: (text: string) => void;

  constructor(record: (text: string) => void) {
    this.#record = record;
  }

  push(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      if (this.#startup) {
        // Untyped: length (itself included), then a code.
        if (this.#buffer.length < 8) return;
        const length = this.#buffer.readInt32BE(0);
        if (this.#buffer.length < length) return;
        const code = this.#buffer.readInt32BE(4);
        if (code !== SSL_REQUEST && code !== GSS_REQUEST) this.#startup = false;
        this.#buffer = this.#buffer.subarray(length);
        continue;
      }
      if (this.#buffer.length < 5) return;
      const type = String.fromCharCode(this.#buffer[0] as number);
      const length = this.#buffer.readInt32BE(1);
      if (this.#buffer.length < 1 + length) return;
      this.#message(type, this.#buffer.subarray(5, 1 + length));
      this.#buffer = this.#buffer.subarray(1 + length);
    }
  }

  #message(type: string, body: Buffer): void {
    const strings = (count: number): string[] => {
      const out: string[] = [];
      let at = 0;
      for (let i = 0; i < count; i++) {
        const end = body.indexOf(0, at);
        if (end < 0) break;
        out.push(body.toString("utf8", at, end));
        at = end + 1;
      }
      return out;
    };
    if (type === "Q") {
      this.#record(strings(1)[0] ?? "");
    } else if (type === "P") {
      const [name = "", text = ""] = strings(2);
      this.#prepared.set(name, text);
    } else if (type === "B") {
      const [portal = "", statement = ""] = strings(2);
      this.#portals.set(portal, this.#prepared.get(statement) ?? `<prepared statement ${statement}>`);
    } else if (type === "E") {
      const [portal = ""] = strings(1);
      this.#record(this.#portals.get(portal) ?? "<unknown portal>");
    }
  }
}

export async function startCensusProxy(targetUrl: string): Promise<CensusProxy> {
  const target = new URL(targetUrl);
  const targetHost = target.hostname;
  const targetPort = Number(target.port || 5432);
  const statements: CensusStatement[] = [];
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((client) => {
    const connection = ++connections;
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client).add(upstream);
    const reader = new FrontendReader((text) => statements.push({ at: performance.now(), text, connection }));
    client.on("data", (chunk: Buffer) => {
      reader.push(chunk);
      upstream.write(chunk);
    });
    upstream.pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address() as net.AddressInfo;
  const url = new URL(targetUrl);
  url.hostname = "127.0.0.1";
  url.port = String(address.port);
  return {
    url: url.toString(),
    statements,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** BEGIN / COMMIT / ROLLBACK / SAVEPOINT: the transaction's frame, not its work. */
export function isTransactionControl(text: string): boolean {
  return /^\s*(begin|start transaction|commit|rollback|savepoint|release)\b/i.test(text);
}

export function isBegin(text: string): boolean {
  return /^\s*(begin|start transaction)\b/i.test(text);
}

/**
 * The statements grouped by transaction: per connection, BEGIN up to its
 * COMMIT / ROLLBACK (frame included); a statement outside one is a
 * transaction of its own.
 */
export function transactions(statements: readonly CensusStatement[]): CensusStatement[][] {
  const open = new Map<number, CensusStatement[]>();
  const done: CensusStatement[][] = [];
  for (const statement of statements) {
    const current = open.get(statement.connection);
    if (isBegin(statement.text)) {
      if (current) done.push(current);
      open.set(statement.connection, [statement]);
    } else if (current) {
      current.push(statement);
      if (/^\s*(commit|rollback|end)\b/i.test(statement.text)) {
        done.push(current);
        open.delete(statement.connection);
      }
    } else {
      done.push([statement]);
    }
  }
  done.push(...open.values());
  return done;
}
