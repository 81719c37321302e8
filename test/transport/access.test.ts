import { readFileSync } from "node:fs";
import { create, createFileRegistry, type DescService, fromBinary, setExtension } from "@bufbuild/protobuf";
import {
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  MethodOptionsSchema,
  file_google_protobuf_empty,
} from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport, type ServiceImpl } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/contract/api-error.ts";
import { operationSpec } from "../../src/contract/routes.ts";
import { public$, required_scope } from "../../src/gen/mail/v1/options_pb.js";
import { authInterceptor } from "../../src/transport/connect/auth-interceptor.ts";
import { errorsInterceptor } from "../../src/transport/connect/errors-interceptor.ts";

/** Every service of the contract, from the descriptor set `npm run generate` writes. */
function contractServices(): DescService[] {
  const set = fromBinary(FileDescriptorSetSchema, readFileSync(new URL("../../src/gen/mail.binpb", import.meta.url)));
  const services: DescService[] = [];
  for (const file of createFileRegistry(set).files) services.push(...file.services);
  return services;
}

describe("every RPC declares who may call it", () => {
  it("each RPC of each service has a required_scope, is public, or belongs to an operator_only service", () => {
    const services = contractServices();
    expect(services.map((s) => s.typeName)).toEqual(expect.arrayContaining(["mail.v1.MailService", "mail.v1.AdminService"]));
    const undeclared: string[] = [];
    for (const service of services) {
      for (const method of service.methods) {
        const access = operationSpec(method).access;
        if (access.kind === "undeclared") undeclared.push(`${service.typeName}.${method.name}: ${access.reason}`);
      }
    }
    expect(undeclared).toEqual([]);
  });
});

/** A service of RPCs with and without the options, to see what the server does with each. */
function probeService(): DescService {
  const options = (o: { public?: boolean; scope?: string }) => {
    const message = create(MethodOptionsSchema);
    if (o.public) setExtension(message, public$, true);
    if (o.scope) setExtension(message, required_scope, o.scope);
    return message;
  };
  const empty = ".google.protobuf.Empty";
  const file = create(FileDescriptorProtoSchema, {
    name: "test/access_probe.proto",
    package: "test.access",
    syntax: "proto3",
    dependency: ["google/protobuf/empty.proto"],
    service: [
      {
        name: "Probe",
        method: [
          { name: "Undeclared", inputType: empty, outputType: empty },
          { name: "Contradictory", inputType: empty, outputType: empty, options: options({ public: true, scope: "mail.events.read" }) },
          { name: "Open", inputType: empty, outputType: empty, options: options({ public: true }) },
        ],
      },
    ],
  });
  const registry = createFileRegistry(file, (name) => (name === "google/protobuf/empty.proto" ? file_google_protobuf_empty : undefined));
  const service = registry.getService("test.access.Probe");
  if (!service) throw new Error("probe service missing");
  return service;
}

describe("the auth interceptor fails closed", () => {
  const service = probeService();
  const handled: string[] = [];
  const logged: string[] = [];
  const impl = {
    undeclared: () => (handled.push("Undeclared"), {}),
    contradictory: () => (handled.push("Contradictory"), {}),
    open: () => (handled.push("Open"), {}),
  } as unknown as ServiceImpl<typeof service>;
  const transport = createRouterTransport((router) => router.service(service, impl), {
    router: {
      interceptors: [
        errorsInterceptor({ error: (_details, message) => logged.push(message) }),
        authInterceptor({
          authenticator: {
            authenticate: () => Promise.reject(new ApiError("API_KEY_INVALID", "The API key is unknown or has been revoked.")),
          },
          rateLimiter: { consume: () => Promise.reject(new Error("not reached")) },
          defaultRequestsPerMinute: 600,
          operatorToken: undefined,
        }),
      ],
    },
  });
  const client = createClient(service, transport) as unknown as Record<string, (request: object) => Promise<unknown>>;
  const call = (name: string) => (client[name] as (request: object) => Promise<unknown>)({});

  it("an RPC that declares neither a scope nor public is never served", async () => {
    const error = await call("undeclared").then(() => undefined, (e: unknown) => ConnectError.from(e));
    expect(error?.code).toBe(Code.Internal);
    expect(handled).not.toContain("Undeclared");
    expect(logged.length).toBeGreaterThan(0);
  });

  it("an RPC that is public and has a scope is never served", async () => {
    const error = await call("contradictory").then(() => undefined, (e: unknown) => ConnectError.from(e));
    expect(error?.code).toBe(Code.Internal);
    expect(handled).not.toContain("Contradictory");
  });

  it("a public RPC is served without a key", async () => {
    await call("open");
    expect(handled).toContain("Open");
  });
});
