/**
 * A Temporal frontend reachable only over mutual TLS, for tests: a TLS
 * terminator on 127.0.0.1 in front of a (plaintext) Temporal dev server,
 * with a private CA that signs its certificate (for a name, not the
 * address, so the client must be told the server name) and a client
 * certificate. Connections without a client certificate of that CA are
 * refused in the handshake.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { generate } from "selfsigned";

export const TEMPORAL_TLS_SERVER_NAME = "temporal.mail.test";

export interface TemporalTlsProxy {
  /** 127.0.0.1:<port> */
  readonly address: string;
  /** PEM files: the CA, the client's certificate and key. */
  readonly files: { readonly ca: string; readonly clientCert: string; readonly clientKey: string };
  /** Handshakes completed with a valid client certificate, and refused ones. */
  readonly handshakes: { authorized: number; refused: number };
  close(): Promise<void>;
}

const VALIDITY = () => ({ notBeforeDate: new Date(Date.now() - 60_000), notAfterDate: new Date(Date.now() + 24 * 3_600_000) });

export async function startTemporalTlsProxy(upstream: string): Promise<TemporalTlsProxy> {
  const ca = await generate([{ name: "commonName", value: "Mail test CA" }], {
    keyType: "ec",
    algorithm: "sha256",
    ...VALIDITY(),
    extensions: [
      { name: "basicConstraints", cA: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true },
    ],
  });
  const signer = { key: ca.private, cert: ca.cert };
  const server = await generate([{ name: "commonName", value: TEMPORAL_TLS_SERVER_NAME }], {
    keyType: "ec",
    algorithm: "sha256",
    ca: signer,
    ...VALIDITY(),
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: [{ type: 2, value: TEMPORAL_TLS_SERVER_NAME }] },
    ],
  });
  const client = await generate([{ name: "commonName", value: "mail-worker" }], {
    keyType: "ec",
    algorithm: "sha256",
    ca: signer,
    ...VALIDITY(),
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", clientAuth: true },
    ],
  });

  const dir = await mkdtemp(path.join(tmpdir(), "temporal-tls-"));
  const files = { ca: path.join(dir, "ca.pem"), clientCert: path.join(dir, "client.pem"), clientKey: path.join(dir, "client.key") };
  await Promise.all([writeFile(files.ca, ca.cert), writeFile(files.clientCert, client.cert), writeFile(files.clientKey, client.private)]);

  const [upstreamHost, upstreamPort] = [upstream.slice(0, upstream.lastIndexOf(":")), Number(upstream.slice(upstream.lastIndexOf(":") + 1))];
  const handshakes = { authorized: 0, refused: 0 };
  const sockets = new Set<net.Socket>();
  const proxy = tls.createServer(
    { key: server.private, cert: server.cert, ca: [ca.cert], requestCert: true, rejectUnauthorized: true, ALPNProtocols: ["h2"] },
    (socket) => {
      handshakes.authorized += 1;
      const backend = net.connect({ host: upstreamHost, port: upstreamPort });
      sockets.add(socket).add(backend);
      socket.pipe(backend).pipe(socket);
      const end = (): void => {
        socket.destroy();
        backend.destroy();
      };
      socket.once("close", end).once("error", end);
      backend.once("close", end).once("error", end);
    },
  );
  proxy.on("tlsClientError", () => (handshakes.refused += 1));
  proxy.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => proxy.listen({ host: "127.0.0.1", port: 0 }, resolve));
  const { port } = proxy.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    files,
    handshakes,
    async close() {
      await new Promise<void>((resolve) => {
        proxy.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      await rm(dir, { recursive: true, force: true });
    },
  };
}
