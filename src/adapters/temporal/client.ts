import { Client, Connection } from "@temporalio/client";

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

export interface TemporalClientOptions {
  /** host:port of the Temporal frontend. */
  readonly address: string;
  readonly namespace: string;
}

export function createTemporalClient(options: TemporalClientOptions): TemporalClient {
  // Lazy: nothing is dialled until the first call, so the API starts (and
  // accepts mail, which the outbox relay dispatches later) while Temporal is
  // down; a call while it is unreachable fails after connectTimeout.
  const connection = Connection.lazy({ address: options.address, connectTimeout: "2s" });
  const client = new Client({ connection, namespace: options.namespace });
  let closed: Promise<void> | undefined;
  return {
    client,
    close: () => (closed ??= connection.close()),
  };
}
