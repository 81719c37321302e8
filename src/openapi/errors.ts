/**
 * Error answers: which codes an operation can answer, grouped by the HTTP
 * status the contract declares for each (errors.proto), and the one
 * ErrorResponse schema they all share.
 */
import type { DescEnum } from "@bufbuild/protobuf";
import { ERROR_CODES } from "../contract/api-error.ts";
import type { ErrorCodeName } from "../contract/api-error.ts";
import { commentOf } from "./comments.ts";
import { reasonPhrase, responseHeaders } from "./headers.ts";
import type { JsonObject, SchemaObject } from "./types.ts";

export const ERROR_SCHEMA = "ErrorResponse";

/**
 * Error codes that only some operations can answer. The contract has no
 * per-method error option yet, so this is the one place where operation
 * knowledge is repeated (from the spec's "Errors" line of POST /mail/v1/send).
 */
const OPERATION_SPECIFIC_ERRORS: Readonly<Record<string, readonly ErrorCodeName[]>> = {
  SendMessage: ["INSUFFICIENT_CREDITS", "SENDER_NOT_VERIFIED"],
};

export interface OperationTraits {
  readonly authenticated: boolean;
  readonly hasInput: boolean;
  readonly hasBody: boolean;
  readonly idempotent: boolean;
  readonly hasPathParams: boolean;
}

/**
 * The error codes an operation can answer, grouped by the HTTP status the
 * contract declares for each (errors.proto), ascending.
 */
export function errorCodesFor(rpcName: string | undefined, traits: OperationTraits): [number, ErrorCodeName[]][] {
  const possible = new Set<ErrorCodeName>(["INTERNAL_ERROR"]);
  if (traits.authenticated) {
    for (const code of [
      "AUTHENTICATION_REQUIRED",
      "API_KEY_INVALID",
      "API_KEY_EXPIRED",
      "FORBIDDEN",
      "FEATURE_NOT_ENTITLED",
      "RATE_LIMITED",
      // Every authenticated call reads the database (key lookup).
      "SERVICE_UNAVAILABLE",
    ] as const) {
      possible.add(code);
    }
  }
  if (traits.hasInput) possible.add("VALIDATION_ERROR");
  // A path id, or a body naming other records (template, sender, list, contact).
  if (traits.hasPathParams || traits.hasBody) possible.add("NOT_FOUND");
  if (traits.hasBody) possible.add("PAYLOAD_TOO_LARGE");
  if (traits.idempotent) possible.add("IDEMPOTENCY_CONFLICT");
  for (const code of (rpcName !== undefined ? OPERATION_SPECIFIC_ERRORS[rpcName] : undefined) ?? []) {
    possible.add(code);
  }

  const byStatus = new Map<number, ErrorCodeName[]>();
  // ERROR_CODES is in contract order, which keeps each list stable.
  for (const [name, spec] of ERROR_CODES) {
    if (!possible.has(name)) continue;
    const list = byStatus.get(spec.httpStatus) ?? [];
    list.push(name);
    byStatus.set(spec.httpStatus, list);
  }
  return [...byStatus.entries()].sort(([a], [b]) => a - b);
}

/** The Response Object of one error status; its description lists the codes (with their proto comments). */
export function errorResponse(
  status: number,
  codes: readonly ErrorCodeName[],
  authenticated: boolean,
  errorEnum: DescEnum,
): JsonObject {
  const lines = codes.map((code) => {
    const value = errorEnum.values.find((v) => v.name === `ERROR_CODE_${code}`);
    const description = value ? commentOf(value) : undefined;
    return description ? `- \`${code}\`: ${description}` : `- \`${code}\``;
  });
  const response: JsonObject = {
    description: `${reasonPhrase(status)}. Error codes:\n${lines.join("\n")}`,
    headers: responseHeaders({ authenticated, status, replayable: false }),
    content: { "application/json": { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } } },
    "x-error-codes": [...codes],
  };
  return response;
}

/** The error responses of an operation, by status. */
export function errorResponses(
  rpcName: string | undefined,
  traits: OperationTraits,
  errorEnum: DescEnum,
): Record<string, JsonObject> {
  return Object.fromEntries(
    errorCodesFor(rpcName, traits).map(([status, codes]) => [
      String(status),
      errorResponse(status, codes, traits.authenticated, errorEnum),
    ]),
  );
}

export function errorResponseSchema(): SchemaObject {
  return {
    type: "object",
    description:
      "Every error answer. Branch on `error.code`; `error.message` is for humans and may change.",
    required: ["error"],
    properties: {
      error: {
        type: "object",
        required: ["code", "message"],
        properties: {
          code: { type: "string", enum: [...ERROR_CODES.keys()] },
          message: { type: "string" },
        },
      },
    },
  };
}
