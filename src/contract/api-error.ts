import { getOption } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type ErrorCode, ErrorCodeSchema } from "../gen/mail/v1/errors_pb.js";
import { grpc_code, http_status } from "../gen/mail/v1/options_pb.js";
import { ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { create } from "@bufbuild/protobuf";

/**
 * The stable error codes of the contract (proto/mail/v1/errors.proto), by
 * their public name (`VALIDATION_ERROR`, ...), derived from the generated
 * enum. The HTTP status and the gRPC code of each are read from the enum
 * value options, so they are declared once, in the contract.
 */
export type ErrorCodeName = Exclude<keyof typeof ErrorCode, "UNSPECIFIED">;

export const ERROR_DOMAIN = "mail.v1";
const PREFIX = "ERROR_CODE_";

export interface ErrorCodeSpec {
  readonly name: ErrorCodeName;
  readonly httpStatus: number;
  readonly grpcCode: Code;
}

/** Every error code of the contract, read from the descriptors once. */
export const ERROR_CODES: ReadonlyMap<ErrorCodeName, ErrorCodeSpec> = new Map(
  ErrorCodeSchema.values
    .filter((v) => v.number !== 0)
    .map((v) => {
      const name = v.name.slice(PREFIX.length) as ErrorCodeName;
      const spec: ErrorCodeSpec = {
        name,
        httpStatus: getOption(v, http_status),
        // google.rpc.Code and Connect's Code share their numbers.
        grpcCode: getOption(v, grpc_code) as number as Code,
      };
      if (!spec.httpStatus) throw new Error(`contract: ${v.name} has no http_status`);
      return [name, spec] as const;
    }),
);

export function errorCodeSpec(name: ErrorCodeName): ErrorCodeSpec {
  const spec = ERROR_CODES.get(name);
  if (!spec) throw new Error(`unknown error code ${name}`);
  return spec;
}

/**
 * An error the API answers on purpose. Domain code throws it; every transport
 * renders it in its own way (REST body, Connect/gRPC status + ErrorInfo).
 * `headers` travel with the error answer (for example `retry-after`).
 */
export class ApiError extends Error {
  readonly code: ErrorCodeName;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCodeName, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.headers = headers;
  }

  get httpStatus(): number {
    return errorCodeSpec(this.code).httpStatus;
  }

  toConnectError(): ConnectError {
    const error = new ConnectError(
      this.message,
      errorCodeSpec(this.code).grpcCode,
      new Headers(this.headers),
      [{ desc: ErrorInfoSchema, value: create(ErrorInfoSchema, { reason: this.code, domain: ERROR_DOMAIN }) }],
    );
    return error;
  }
}

/** A 400 VALIDATION_ERROR that names each bad field. */
export class ValidationError extends ApiError {
  readonly fields: readonly FieldProblem[];
  constructor(fields: readonly FieldProblem[]) {
    super("VALIDATION_ERROR", fields.map((f) => `${f.field}: ${f.problem}`).join("; "));
    this.fields = fields;
  }
}

export interface FieldProblem {
  /** JSON path of the field as the caller wrote it, e.g. `to.email`. */
  readonly field: string;
  readonly problem: string;
}

/** Recovers the contract error code from any error a transport caught. */
export function apiErrorFrom(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof ConnectError) {
    const info = error.findDetails(ErrorInfoSchema).find((d) => d.domain === ERROR_DOMAIN);
    if (info && ERROR_CODES.has(info.reason as ErrorCodeName)) {
      const headers: Record<string, string> = {};
      error.metadata.forEach((value, key) => {
        headers[key] = value;
      });
      return new ApiError(info.reason as ErrorCodeName, error.rawMessage, headers);
    }
  }
  return undefined;
}
