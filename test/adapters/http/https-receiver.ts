import { createServer, type Server } from "node:https";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { generate } from "selfsigned";

/**
 * A real HTTPS webhook receiver on 127.0.0.1 for tests, with a self-signed
 * certificate made at test time and trusted only by the sender the test
 * builds (never by the process). The certificate names 127.0.0.1, ::1,
 * localhost and any extra names a test connects by.
 */
export interface TestCertificate {
  readonly key: string;
  readonly cert: string;
}

export async function makeTestCertificate(names: readonly string[] = []): Promise<TestCertificate> {
  const pems = await generate([{ name: "commonName", value: "webhook-receiver.test" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notAfterDate: new Date(Date.now() + 24 * 3_600_000),
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 7, ip: "127.0.0.1" },
          { type: 7, ip: "::1" },
          { type: 2, value: "localhost" },
          ...names.map((value) => ({ type: 2 as const, value })),
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

/** One request as the receiver saw it: the raw body, exactly as received. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** TLS server name the client asked for (SNI); false when none. */
  readonly servername: string | false;
}

export type ReceiverHandler = (request: ReceivedRequest, response: ServerResponse) => void;

export interface HttpsReceiver {
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedRequest[];
  /** Replaces how the receiver answers (default: 200 with an empty body). */
  handle(handler: ReceiverHandler): void;
  /** Resolves once `count` requests arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startHttpsReceiver(certificate: TestCertificate): Promise<HttpsReceiver> {
  const received: ReceivedRequest[] = [];
  const waiters: Array<() => void> = [];
  let handler: ReceiverHandler = (_request, response) => response.writeHead(200).end();
  const sockets = new Set<Socket>();

  const server: Server = createServer({ key: certificate.key, cert: certificate.cert }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const tls = req.socket as Socket & { servername?: string | false };
      const request: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        servername: tls.servername ?? false,
      };
      received.push(request);
      for (const wake of waiters.splice(0)) wake();
      handler(request, res);
    });
  });
  server.on("secureConnection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  // The sender hangs up on purpose (it never reads bodies); that is no test failure.
  server.on("tlsClientError", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://127.0.0.1:${port}`,
    port,
    received,
    handle(next) {
      handler = next;
    },
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`receiver got ${received.length} requests, expected ${count}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
