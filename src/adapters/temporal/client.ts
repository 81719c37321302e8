import { readFileSync } from "node:fs";
import { Client, Connection } from "@temporalio/client";
import type { TLSConfig } from "@temporalio/client";

/**
 * The process's one Temporal client: every dispatcher (messages, webhook
 * deliveries, ...) starts and signals its workflows through it, over one
 * gRPC connection. The composition root creates it and closes it once,
 * after the dispatchers that use it have stopped.
 */
export interface TemporalClient {
  readonly client: Client;
  /** Closes the connection; later calls wait for the first. */
  close(): Promise<void>;
}

/** TLS material towards Temporal, as files (PEM) read once when a connection is made. */
export interface TemporalTlsFiles {
  /** mTLS: the client certificate and its private key (both or neither). */
  readonly clientCertPath?: string | undefined;
  readonly clientKeyPath?: string | undefined;
  /** The server's CA, when the system's trusted CAs do not cover it. */
  readonly serverCaCertPath?: string | undefined;
  /** The name checked in the server's certificate (SNI), when not the address's host. */
  readonly serverName?: string | undefined;
}

/** How to reach a Temporal frontend: a cluster with or without TLS, or Temporal Cloud. */
export interface TemporalConnectionSettings {
  /** host:port of the Temporal frontend. */
  readonly address: string;
  /** TLS (undefined: plaintext, a cluster on a private network or the dev server). */
  readonly tls?: TemporalTlsFiles | undefined;
  /** Temporal Cloud API key, sent as `Authorization: Bearer` (only over TLS). */
  readonly apiKey?: string | undefined;
}

export interface TemporalClientOptions extends TemporalConnectionSettings {
  readonly namespace: string;
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(`cannot read the Temporal ${what} ${path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/**
 * The TLS and API key options of a Temporal connection, the same for the
 * client (`@temporalio/client` Connection) and the workers' NativeConnection.
 * Reads the files now: a missing or unreadable one stops the start, naming it.
 */
export function temporalConnectionOptions(settings: Omit<TemporalConnectionSettings, "address">): { tls?: TLSConfig; apiKey?: string } {
  const files = settings.tls;
  const options: { tls?: TLSConfig; apiKey?: string } = {};
  if (files) {
    const tls: { -readonly [K in keyof TLSConfig]: TLSConfig[K] } = {};
    if (files.serverName !== undefined) tls.serverNameOverride = files.serverName;
    if (files.serverCaCertPath !== undefined) tls.serverRootCACertificate = readPem(files.serverCaCertPath, "server CA certificate");
    if (files.clientCertPath !== undefined && files.clientKeyPath !== undefined) {
      tls.clientCertPair = { crt: readPem(files.clientCertPath, "client certificate"), key: readPem(files.clientKeyPath, "client key") };
    }
    options.tls = tls;
  }
  if (settings.apiKey !== undefined) {
    if (!files) throw new Error("a Temporal API key is only sent over TLS: set the TLS settings too");
    options.apiKey = settings.apiKey;
  }
  return options;
}

/**
 * The deadline of a relay's workflow start or signal, the client's own
 * retries included. Past it, a retry of a call that met an unreachable
 * Temporal (UNAVAILABLE) ends at once instead of being scheduled again, and
 * what was not started is left to the next relay pass.
 */
export const START_DEADLINE_MS = 10_000;

/** The calls made through boundedCall and not settled yet, per client. */
const boundedCalls = new WeakMap<Client, Set<Promise<unknown>>>();

/**
 * Runs `call` on `client` within `timeoutMs` (a gRPC deadline), and makes
 * the client's close() wait for it. The SDK retries an unavailable server
 * with timers of its own; a retry firing after the connection closed would
 * find the channel shut and throw where nobody catches it. With a deadline
 * the retries end soon after it, so close() never waits long.
 */
export function boundedCall<T>(client: Client, timeoutMs: number, call: () => Promise<T>): Promise<T> {
  const promise = client.connection.withDeadline(Date.now() + timeoutMs, call);
  const pending = boundedCalls.get(client);
  if (pending) {
    pending.add(promise);
    promise.then(
      () => pending.delete(promise),
      () => pending.delete(promise),
    );
  }
  return promise;
}

export function createTemporalClient(options: TemporalClientOptions): TemporalClient {
  // Lazy: nothing is dialled until the first call, so the API starts (and
  // accepts mail, which the outbox relay dispatches later) while Temporal is
  // down; a call while it is unreachable fails after connectTimeout.
  const connection = Connection.lazy({ address: options.address, connectTimeout: "2s", ...temporalConnectionOptions(options) });
  const client = new Client({ connection, namespace: options.namespace });
  const pending = new Set<Promise<unknown>>();
  boundedCalls.set(client, pending);
  let closed: Promise<void> | undefined;
  return {
    client,
    close: () =>
      (closed ??= (async () => {
        await Promise.allSettled([...pending]);
        await connection.close();
      })()),
  };
}
