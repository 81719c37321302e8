import { create, createFileRegistry, type DescMessage, type DescMethodUnary, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import type { Readiness } from "../http/health.ts";

/**
 * `grpc.health.v1.Health/Check`, the standard gRPC health check (what
 * grpc_health_probe and Kubernetes' gRPC probes call): SERVING while the
 * service is ready (src/transport/http/health.ts), NOT_SERVING otherwise.
 * The service name "" is the whole server; any other name is
 * SERVICE_UNKNOWN-free: every service shares the same dependencies.
 *
 * The descriptor is built here rather than from proto/, which holds the
 * mail contract only (and generates its OpenAPI document); Watch is not
 * served (answers UNIMPLEMENTED, as the protocol allows).
 */
const registry = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "grpc/health/v1/health.proto",
    package: "grpc.health.v1",
    syntax: "proto3",
    messageType: [
      { name: "HealthCheckRequest", field: [{ name: "service", number: 1, type: 9, label: 1, jsonName: "service" }] },
      {
        name: "HealthCheckResponse",
        field: [{ name: "status", number: 1, type: 14, label: 1, typeName: ".grpc.health.v1.HealthCheckResponse.ServingStatus", jsonName: "status" }],
        enumType: [
          {
            name: "ServingStatus",
            value: [
              { name: "UNKNOWN", number: 0 },
              { name: "SERVING", number: 1 },
              { name: "NOT_SERVING", number: 2 },
              { name: "SERVICE_UNKNOWN", number: 3 },
            ],
          },
        ],
      },
    ],
    service: [{ name: "Health", method: [{ name: "Check", inputType: ".grpc.health.v1.HealthCheckRequest", outputType: ".grpc.health.v1.HealthCheckResponse" }] }],
  }),
  () => undefined,
);

function found<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`grpc health descriptor: ${name} missing`);
  return value;
}

export const HealthService: DescService = found(registry.getService("grpc.health.v1.Health"), "Health");
export const HealthCheckResponse: DescMessage = found(registry.getMessage("grpc.health.v1.HealthCheckResponse"), "HealthCheckResponse");

export const SERVING = 1;
export const NOT_SERVING = 2;

/** Registers Health/Check on `router`. */
export function grpcHealth(router: ConnectRouter, readiness: Readiness): void {
  const check = found(HealthService.methods.find((method) => method.name === "Check"), "Check") as DescMethodUnary;
  router.rpc(check, async () => {
    const report = await readiness();
    return create(HealthCheckResponse, { status: report.ready ? SERVING : NOT_SERVING });
  });
}
