import { mkdtemp, rm, writeFile } from "node:fs/promises";
import https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminService } from "../../src/gen/mail/v1/admin_pb.js";
import { type ApiHarness, OPERATOR_TOKEN, startApiHarness } from "../support/api-harness.ts";
import { makeTestCertificate, type TestCertificate } from "../adapters/http/https-receiver.ts";

/**
 * The operator listener with TLS (OPERATOR_TLS_CERT_PATH, OPERATOR_TLS_KEY_PATH):
 * what lets production put it on another interface than loopback (issue 18,
 * item 8). One port still serves HTTP/1.1 (mailctl, Prometheus) and HTTP/2
 * (gRPC clients), now inside TLS; a client in clear text or one that does
 * not trust the certificate gets nothing.
 */
let h: ApiHarness;
let certificate: TestCertificate;
let dir: string;

const operator: Interceptor = (next) => (req) => {
  req.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
  return next(req);
};

function getMetrics(url: string, ca: string | undefined): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(new URL("/metrics", url), { ...(ca ? { ca } : {}) }, (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      })
      .on("error", reject);
  });
}

beforeAll(async () => {
  certificate = await makeTestCertificate();
  dir = await mkdtemp(path.join(tmpdir(), "operator-tls-"));
  const certPath = path.join(dir, "operator.pem");
  const keyPath = path.join(dir, "operator.key");
  await writeFile(certPath, certificate.cert);
  await writeFile(keyPath, certificate.key, { mode: 0o600 });
  h = await startApiHarness({ operatorTls: { certPath, keyPath } });
});

afterAll(async () => {
  await h?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the operator listener with TLS", () => {
  it("answers AdminService over TLS, with HTTP/1.1 (Connect) and HTTP/2 (gRPC) on its one port", async () => {
    expect(h.app.operatorUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const overHttp1 = createClient(
      AdminService,
      createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1", interceptors: [operator], nodeOptions: { ca: certificate.cert } }),
    );
    const { company } = await overHttp1.createCompany({ name: "Over TLS Ltd", entitlements: { api: true, smtp: false } });
    expect(company?.id).toBeTruthy();

    const overHttp2 = createClient(
      AdminService,
      createGrpcTransport({ baseUrl: h.app.operatorUrl, interceptors: [operator], nodeOptions: { ca: certificate.cert } }),
    );
    const { companies } = await overHttp2.listCompanies({});
    expect(companies.map((c) => c.name)).toContain("Over TLS Ltd");

    const metrics = await getMetrics(h.app.operatorUrl, certificate.cert);
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain("# TYPE");
  });

  it("gives nothing to a client in clear text or one that does not trust the certificate", async () => {
    const port = new URL(h.app.operatorUrl).port;
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
    await expect(getMetrics(h.app.operatorUrl, undefined)).rejects.toThrow(/self-signed|certificate/i);
    // The listener is still there for the next, proper client.
    expect((await getMetrics(h.app.operatorUrl, certificate.cert)).status).toBe(200);
  });
});
