import net from "node:net";
import tls from "node:tls";
import type { Server as HttpServer } from "node:http";
import type { Http2Server } from "node:http2";

/**
 * One TCP port for both HTTP/1.1 and cleartext HTTP/2 (h2c with prior
 * knowledge), told apart by the first bytes: an HTTP/2 client opens with
 * the connection preface `PRI * HTTP/2.0`. The operator listener needs both
 * on one port: gRPC and Connect over HTTP/2 for clients such as grpcurl,
 * and HTTP/1.1 for Prometheus, health probes, curl and mailctl.
 */
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

function isHttp2(first: Buffer): boolean {
  const length = Math.min(first.length, PREFACE.length);
  return first.subarray(0, length).equals(PREFACE.subarray(0, length));
}

export interface DualProtocolServer {
  readonly server: net.Server;
  /**
   * Stops accepting, then ends the connections still open once `drain`
   * (closing the two servers, which answer what is in flight) is done:
   * servers that never listened do not end the connections handed to them.
   */
  close(drain: () => Promise<unknown>): Promise<void>;
}

/** A certificate chain and its private key (PEM): the port then speaks TLS, offering h2 and http/1.1 (ALPN). */
export interface OperatorTls {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}

/**
 * Hands each connection to `http1` or `h2c` (neither listens itself); with
 * `tls`, after the handshake (the first bytes are then the decrypted ones).
 */
export function dualProtocolServer(http1: HttpServer, h2c: Http2Server, tlsOptions?: OperatorTls): DualProtocolServer {
  const sockets = new Set<net.Socket>();
  const handle = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.once("data", (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      if (isHttp2(first)) {
        // The HTTP/2 session reads what is buffered on the socket itself.
        h2c.emit("connection", socket);
      } else {
        http1.emit("connection", socket);
        socket.resume();
      }
    });
    // A connection closed before its first byte is nobody's to handle.
    socket.on("error", () => socket.destroy());
  };
  const server = tlsOptions
    ? tls.createServer({ cert: tlsOptions.cert, key: tlsOptions.key, ALPNProtocols: ["h2", "http/1.1"], minVersion: "TLSv1.2" }, handle)
    : net.createServer(handle);
  // A failed handshake (a plain-text client, a scanner) closes that connection only.
  server.on("tlsClientError", (_error: Error, socket: net.Socket) => socket.destroy());
  // Node's HTTP/1.1 server checks its headers and request timeouts from
  // its "listening" event on; it never listens itself, so it is told.
  server.once("listening", () => http1.emit("listening"));
  return {
    server,
    async close(drain) {
      const closed = new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
      await drain();
      for (const socket of sockets) socket.destroy();
      // Stops that timeout check (the server was never listening: nothing else to close).
      http1.close(() => undefined);
      await closed;
    },
  };
}
