import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import {
  GetAccountRequestSchema,
  GetAccountResponseSchema,
  type GetAccountResponse,
  ListFormsRequestSchema,
  ListFormsResponseSchema,
  MailService,
  type MessageStatus,
} from "../../src/gen/mail/v1/mail_pb.js";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { StatusSchema } from "../../src/gen/google/rpc/status_pb.js";
import { type WebhookDeliveryState, WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";

/** A plain @grpc/grpc-js client: the standard gRPC stack, not Connect's. */
function grpcJsUnary<Req, Res>(
  client: grpc.Client,
  path: string,
  serialize: (value: Req) => Buffer,
  deserialize: (bytes: Buffer) => Res,
  request: Req,
  metadata: grpc.Metadata,
): Promise<{ response?: Res; error?: grpc.ServiceError }> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, serialize, deserialize, request, metadata, (error, response) => {
      resolve(error ? { error } : { response: response ?? undefined });
    });
  });
}

describe("gRPC, Connect and gRPC-Web doors", () => {
  let h: ApiHarness;
  let secret: string;
  let companyId: string;
  let grpcClient: grpc.Client;

  beforeAll(async () => {
    h = await startApiHarness();
    ({ secret, companyId } = await h.newCompanyWithKey(["mail.events.read"]));
    grpcClient = new grpc.Client(new URL(h.app.grpcUrl).host, grpc.credentials.createInsecure());
  });
  afterAll(async () => {
    grpcClient?.close();
    await h?.close();
  });

  const getAccount = (metadata: grpc.Metadata) =>
    grpcJsUnary(
      grpcClient,
      "/mail.v1.MailService/GetAccount",
      (m: ReturnType<typeof create<typeof GetAccountRequestSchema>>) => Buffer.from(toBinary(GetAccountRequestSchema, m)),
      (b: Buffer): GetAccountResponse => fromBinary(GetAccountResponseSchema, b),
      create(GetAccountRequestSchema),
      metadata,
    );

  it("a standard gRPC client (@grpc/grpc-js) calls GetAccount with the key in `authorization` metadata", async () => {
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${secret}`);
    const { response, error } = await getAccount(metadata);
    expect(error).toBeUndefined();
    expect(response?.organization?.id).toBe(companyId);
    expect(response?.apiVersion).toBe("v1");
    expect(response?.key?.scopes).toEqual(["mail.events.read"]);
  });

  it("gRPC errors carry the contract's code as a google.rpc.ErrorInfo reason", async () => {
    const { error } = await getAccount(new grpc.Metadata());
    expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
    const details = error?.metadata.get("grpc-status-details-bin")[0];
    expect(details).toBeInstanceOf(Buffer);
    const status = fromBinary(StatusSchema, details as Buffer);
    const info = status.details.map((any) => anyUnpack(any, ErrorInfoSchema)).find((d) => d);
    expect(info?.reason).toBe("AUTHENTICATION_REQUIRED");
    expect(info?.domain).toBe("mail.v1");

    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${secret}`);
    const forms = await grpcJsUnary(
      grpcClient,
      "/mail.v1.MailService/ListForms",
      (m: ReturnType<typeof create<typeof ListFormsRequestSchema>>) => Buffer.from(toBinary(ListFormsRequestSchema, m)),
      (b: Buffer) => fromBinary(ListFormsResponseSchema, b),
      create(ListFormsRequestSchema),
      metadata,
    );
    // An authenticated call gets past the check (the company has no forms yet).
    expect(forms.error).toBeFalsy();
    expect(forms.response?.items).toEqual([]);
  });

  it("an enum number the contract does not declare is a 400 naming the field, as an unknown name is over REST", async () => {
    const client = createClient(MailService, createGrpcTransport({ baseUrl: h.app.grpcUrl }));
    const headers = { authorization: `Bearer ${secret}` };
    const failure = await client.listMessages({ status: 99 as MessageStatus }, { headers }).catch((e: unknown) => ConnectError.from(e));
    expect(failure).toBeInstanceOf(ConnectError);
    expect((failure as ConnectError).code).toBe(Code.InvalidArgument);
    expect((failure as ConnectError).rawMessage).toMatch(/status.*must be one of .*queued/);
    // A declared value still works.
    expect((await client.listMessages({ status: 1 }, { headers })).items).toEqual([]);

    const rest = await h.fetch("/mail/v1/messages?status=nope", { headers });
    expect(rest.status).toBe(400);
    expect(((await rest.json()) as { error: { message: string } }).error.message).toMatch(/status.*must be one of .*queued/);

    const admin = await h.newCompanyWithKey(["mail.admin"]);
    const webhooks = createClient(WebhooksService, createGrpcTransport({ baseUrl: h.app.grpcUrl }));
    const adminHeaders = { authorization: `Bearer ${admin.secret}` };
    const badState = await webhooks.listWebhookDeliveries({ state: 99 as WebhookDeliveryState }, { headers: adminHeaders }).catch((e: unknown) => ConnectError.from(e));
    expect((badState as ConnectError).code).toBe(Code.InvalidArgument);
    expect((badState as ConnectError).rawMessage).toMatch(/state.*must be one of .*dead_letter/);
    expect((await webhooks.listWebhookDeliveries({}, { headers: adminHeaders })).items).toEqual([]);
  });

  it("gRPC answers carry the rate-limit headers and the request id", async () => {
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${secret}`);
    const headers = await new Promise<grpc.Metadata>((resolve, reject) => {
      const call = grpcClient.makeUnaryRequest(
        "/mail.v1.MailService/GetAccount",
        (m: ReturnType<typeof create<typeof GetAccountRequestSchema>>) => Buffer.from(toBinary(GetAccountRequestSchema, m)),
        (b: Buffer) => fromBinary(GetAccountResponseSchema, b),
        create(GetAccountRequestSchema),
        metadata,
        (error) => error && reject(error),
      );
      call.on("metadata", resolve);
    });
    expect(headers.get("x-ratelimit-limit")[0]).toBe("600");
    expect(String(headers.get("x-request-id")[0])).toMatch(/\S{8,}/);
  });

  for (const [name, makeTransport] of [
    ["Connect over HTTP/1.1", (h: ApiHarness) => createConnectTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1" })],
    ["Connect over h2c", (h: ApiHarness) => createConnectTransport({ baseUrl: h.app.grpcUrl, httpVersion: "2" })],
    ["gRPC-Web over HTTP/1.1", (h: ApiHarness) => createGrpcWebTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1" })],
    ["Connect's gRPC client over h2c", (h: ApiHarness) => createGrpcTransport({ baseUrl: h.app.grpcUrl })],
  ] as const) {
    it(`${name}: same answer and same error codes`, async () => {
      const client = createClient(MailService, makeTransport(h));
      const account = await client.getAccount({}, { headers: { authorization: `Bearer ${secret}` } });
      expect(account.organization?.id).toBe(companyId);

      const failure = await client.getAccount({}, { headers: { authorization: "Bearer tml_nope" } }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(ConnectError);
      const connectError = failure as ConnectError;
      expect(connectError.code).toBe(Code.Unauthenticated);
      expect(connectError.findDetails(ErrorInfoSchema)[0]?.reason).toBe("API_KEY_INVALID");
    });
  }
});
