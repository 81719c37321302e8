import type { EventEmitter } from "node:events";

/**
 * Counts the requests the given Node servers (HTTP/1.1 or HTTP/2, listening
 * or fed connections) are answering now: from the request's arrival until
 * its answer is sent or its stream is gone. Graceful shutdown reports it.
 */
export function inFlightRequests(servers: readonly EventEmitter[]): () => number {
  let count = 0;
  for (const server of servers) {
    server.on("request", (_request: unknown, response: EventEmitter) => {
      count++;
      let done = false;
      const end = (): void => {
        if (done) return;
        done = true;
        count--;
      };
      // HTTP/1.1 answers emit "close" in every case; an HTTP/2 compatibility
      // answer emits "finish" when sent and "close" only when cut short.
      response.once("finish", end);
      response.once("close", end);
    });
  }
  return () => count;
}
