import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { AdminService } from "../../src/gen/mail/v1/admin_pb.js";
import { EventsService } from "../../src/gen/mail/v1/events_pb.js";
import { type ApiHarness, bearer, OPERATOR_TOKEN, startApiHarness } from "../support/api-harness.ts";

/**
 * The operator's services (AdminService, EventsService) and /metrics live
 * on their own listener (127.0.0.1:8082 by default), HTTP/1.1 and h2c on
 * one port; the public ports do not serve them at all.
 */
describe("the operator listener", () => {
  let h: ApiHarness;
  const operatorHeaders = { authorization: `Bearer ${OPERATOR_TOKEN}` };

  beforeAll(async () => {
    h = await startApiHarness();
  });
  afterAll(async () => h?.close());

  async function failure(promise: Promise<unknown>): Promise<ConnectError> {
    return promise.then(
      () => {
        throw new Error("the call succeeded");
      },
      (error: unknown) => ConnectError.from(error),
    );
  }

  it("is on 127.0.0.1:8082 unless OPERATOR_HOST and OPERATOR_PORT say otherwise", () => {
    const config = loadConfig({});
    expect([config.operatorHost, config.operatorPort]).toEqual(["127.0.0.1", 8082]);
    expect(loadConfig({ OPERATOR_HOST: "10.0.0.5", OPERATOR_PORT: "9000" })).toMatchObject({ operatorHost: "10.0.0.5", operatorPort: 9000 });
    expect(new URL(h.app.operatorUrl).hostname).toBe("127.0.0.1");
    expect([h.app.httpUrl, h.app.grpcUrl]).not.toContain(h.app.operatorUrl);
  });

  it("serves the AdminService over Connect (HTTP/1.1 and HTTP/2), gRPC and gRPC-Web, with the operator token", async () => {
    const doors: [string, Transport][] = [
      ["Connect over HTTP/1.1", createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1" })],
      ["Connect over h2c", createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "2" })],
      ["gRPC", createGrpcTransport({ baseUrl: h.app.operatorUrl })],
      ["gRPC-Web", createGrpcWebTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1" })],
    ];
    for (const [door, transport] of doors) {
      const admin = createClient(AdminService, transport);
      const { company } = await admin.createCompany({ name: `Via ${door}`, entitlements: { api: true } }, { headers: operatorHeaders });
      const { companies } = await admin.listCompanies({}, { headers: operatorHeaders });
      expect(companies.map((c) => c.id), door).toContain(company?.id);
      expect((await failure(admin.listCompanies({}))).code, door).toBe(Code.Unauthenticated);
    }
  });

  it("is not served on the public ports: the AdminService and the EventsService answer unimplemented there", async () => {
    const publicDoors: [string, Transport][] = [
      ["Connect on the HTTP port", createConnectTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1" })],
      ["gRPC-Web on the HTTP port", createGrpcWebTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1" })],
      ["Connect on the gRPC port", createConnectTransport({ baseUrl: h.app.grpcUrl, httpVersion: "2" })],
      ["gRPC on the gRPC port", createGrpcTransport({ baseUrl: h.app.grpcUrl })],
    ];
    for (const [door, transport] of publicDoors) {
      const admin = createClient(AdminService, transport);
      expect((await failure(admin.listCompanies({}, { headers: operatorHeaders }))).code, door).toBe(Code.Unimplemented);
      const events = createClient(EventsService, transport);
      expect((await failure(events.publishEvent({}, { headers: operatorHeaders }))).code, door).toBe(Code.Unimplemented);
    }
  });

  it("keeps /metrics off the public ports, and the public routes off the operator listener", async () => {
    expect((await fetch(new URL("/metrics", h.app.httpUrl))).status).toBe(404);
    expect((await fetch(new URL("/metrics", h.app.operatorUrl))).status).toBe(200);
    const { secret } = await h.newCompanyWithKey(["mail.events.read"]);
    expect((await fetch(new URL("/mail/v1/me", h.app.httpUrl), bearer(secret))).status).toBe(200);
    expect((await fetch(new URL("/mail/v1/me", h.app.operatorUrl), bearer(secret))).status).toBe(404);
  });
});
