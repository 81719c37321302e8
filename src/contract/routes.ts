import { type DescMethod, type DescService, getOption, hasOption } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { http } from "../gen/google/api/annotations_pb.js";
import {
  member_session,
  operator_only,
  public$ as publicOperation,
  rate_limit_per_minute,
  refuse_api_keys,
  required_scope,
  success_status,
} from "../gen/mail/v1/options_pb.js";

/**
 * Who may call an operation, as its contract declares it:
 * - `key`: a principal holding `scope` (the `required_scope` option): an API
 *   key, a member session whose role grants it, or an operator acting for a
 *   company; `apiKeys` false when the service refuses API keys
 *   (`refuse_api_keys`: only sessions and operators);
 * - `session`: a signed-in member's session only (the `member_session` option);
 * - `public`: anyone, no key (the `public` option);
 * - `operator`: the operator token (the service's `operator_only` option);
 * - `undeclared`: none of them, or a contradiction (`public` with a scope).
 *   The server refuses to serve such an operation: forgetting an option
 *   must never open it.
 */
export type Access =
  | { readonly kind: "key"; readonly scope: string; readonly apiKeys: boolean }
  | { readonly kind: "session" }
  | { readonly kind: "public" }
  | { readonly kind: "operator" }
  | { readonly kind: "undeclared"; readonly reason: string };

/**
 * What the contract says about one RPC, read from its options: the JSON
 * HTTP route (google.api.http), who may call it, the status of a
 * successful answer and its own rate limit. The REST bridge, the
 * authorization interceptor and the OpenAPI document all read this, so each
 * fact is written once, in the .proto file.
 */
export interface OperationSpec {
  readonly method: DescMethod;
  /** The `required_scope` option; empty when the operation needs no API key. */
  readonly scope: string;
  readonly access: Access;
  readonly successStatus: number;
  /** 0: the service-wide default. */
  readonly rateLimitPerMinute: number;
  readonly http: HttpBinding | undefined;
  /** The RPC changes nothing (`idempotency_level = NO_SIDE_EFFECTS` in the contract): a read. */
  readonly readsOnly: boolean;
}

export interface HttpBinding {
  readonly verb: "get" | "post" | "put" | "patch" | "delete";
  /** Path template as written in the contract, e.g. `/mail/v1/messages/{id}`. */
  readonly pathTemplate: string;
  /** Field names bound from the path, in order. */
  readonly pathParams: readonly string[];
  /** `*`, a field name, or empty for no body. */
  readonly body: string;
  /** Field of the response message that is the HTTP body; empty for the whole message. */
  readonly responseBody: string;
}

function accessOf(method: DescMethod): Access {
  const scope = getOption(method, required_scope);
  const isPublic = getOption(method, publicOperation);
  const operatorOnly = getOption(method.parent, operator_only);
  const session = getOption(method, member_session);
  const declared = [
    scope ? "required_scope" : "",
    isPublic ? "public" : "",
    operatorOnly ? "operator_only" : "",
    session ? "member_session" : "",
  ].filter(Boolean);
  if (declared.length > 1) return { kind: "undeclared", reason: `declares ${declared.join(" and ")}` };
  if (scope) return { kind: "key", scope, apiKeys: !getOption(method.parent, refuse_api_keys) };
  if (session) return { kind: "session" };
  if (isPublic) return { kind: "public" };
  if (operatorOnly) return { kind: "operator" };
  return { kind: "undeclared", reason: "declares neither required_scope nor public" };
}

function httpBinding(method: DescMethod): HttpBinding | undefined {
  if (!hasOption(method, http)) return undefined;
  const rule = getOption(method, http);
  const pattern = rule.pattern;
  if (pattern.case === undefined || pattern.case === "custom") {
    throw new Error(`contract: ${method.parent.typeName}.${method.name} has an unsupported http pattern`);
  }
  const pathTemplate = pattern.value;
  const pathParams = [...pathTemplate.matchAll(/\{([a-z_][a-z0-9_]*)\}/g)].map((m) => m[1] as string);
  return { verb: pattern.case, pathTemplate, pathParams, body: rule.body, responseBody: rule.responseBody };
}

const cache = new WeakMap<DescMethod, OperationSpec>();

export function operationSpec(method: DescMethod): OperationSpec {
  let spec = cache.get(method);
  if (!spec) {
    spec = {
      method,
      scope: getOption(method, required_scope),
      access: accessOf(method),
      successStatus: getOption(method, success_status) || 200,
      rateLimitPerMinute: getOption(method, rate_limit_per_minute),
      http: httpBinding(method),
      readsOnly: method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS,
    };
    cache.set(method, spec);
  }
  return spec;
}

export function operationsOf(service: DescService): OperationSpec[] {
  return service.methods.map(operationSpec);
}
