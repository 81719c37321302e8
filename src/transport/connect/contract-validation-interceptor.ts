import type { DescMessage, Message } from "@bufbuild/protobuf";
import { createValidator, type Violation } from "@bufbuild/protovalidate";
import type { Interceptor } from "@connectrpc/connect";
import { type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import { kUnknownJsonFields } from "../http/undecodable-requests.ts";
import { operationProblems } from "./operation-checks.ts";
import { missingRequiredFields } from "./required-fields.ts";

/**
 * The contract's validation of every request, one step on every door
 * (gRPC, its direct unary path, Connect, gRPC-Web and the REST bridge, which
 * all run the same interceptors), after authentication and the rate limit
 * and before any handler. It answers one 400 VALIDATION_ERROR naming each
 * bad field by its JSON path, for the first of these that finds any:
 *
 * 1. keys of a Connect JSON body that name no field, and enum values by
 *    names the enum lacks (found while decoding: kUnknownJsonFields), in the
 *    words of the REST bridge, which refuses the same keys itself;
 * 2. fields marked `(google.api.field_behavior) = REQUIRED` that are missing
 *    (required-fields.ts). That mark stays the one declaration of "required":
 *    the OpenAPI document and client generators read it, and protovalidate's
 *    `required` cannot say that a google.protobuf.Value holding JSON null is
 *    missing;
 * 3. the field rules, protovalidate's `(buf.validate.field)` (string
 *    lengths, integer ranges, list and map sizes, CEL on free-form values),
 *    checked by @bufbuild/protovalidate. A CEL rule on a free-form field
 *    names the part of the value it checks by its id, a JSON path below the
 *    field's (`to.name` on `to`). The answer also names what the
 *    operation's own check finds (operation-checks.ts, checks without
 *    effects), in the operation's words, so that a request names the same
 *    fields whether the contract or the operation refuses it.
 *
 * The operation's own validation still runs after it, for what the contract
 * cannot state. (Streaming calls, which the contract has none of, are left
 * to their handlers, as by the other interceptors.)
 */
export function contractValidationInterceptor(): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) {
      const unknown = req.contextValues.get(kUnknownJsonFields);
      if (unknown.length > 0) throw new ValidationError(unknown);
      const missing = missingRequiredFields(req.method.input, req.message);
      if (missing.length > 0) throw new ValidationError(missing);
      const broken = ruleViolations(req.method.input, req.message);
      if (broken.length > 0) throw new ValidationError(withOperationProblems(broken, operationProblems(req.method, req.message, req.header)));
    }
    return next(req);
  };
}

/**
 * One per process: protovalidate plans each message type's rules the first
 * time it sees it and keeps the plan, so every listener shares the work.
 */
const validator = createValidator();

/** What `message` breaks of its type's `(buf.validate.field)` rules, one problem per violation. */
export function ruleViolations(desc: DescMessage, message: Message): FieldProblem[] {
  const result = validator.validate(desc, message);
  switch (result.kind) {
    case "valid":
      return [];
    case "invalid":
      return result.violations.map(problemOf);
    case "error":
      // A rule the contract got wrong (it does not compile, or fails on a value): a bug, answered INTERNAL_ERROR and logged.
      throw result.error;
  }
}

/** The operation's problems first, then the contract's for the fields the operation did not name. */
function withOperationProblems(contract: readonly FieldProblem[], operation: readonly FieldProblem[]): FieldProblem[] {
  const named = new Set(operation.map((problem) => problem.field));
  return [...operation, ...contract.filter((problem) => !named.has(problem.field))];
}

function problemOf(violation: Violation): FieldProblem {
  let path = "";
  for (const step of violation.field) {
    switch (step.kind) {
      case "field":
        path += `${path === "" ? "" : "."}${step.jsonName}`;
        break;
      case "oneof":
        path += `${path === "" ? "" : "."}${step.localName}`;
        break;
      case "extension":
        path += `${path === "" ? "" : "."}[${step.typeName}]`;
        break;
      case "list_sub":
        path += `[${step.index}]`;
        break;
      case "map_sub":
        path += `.${String(step.key)}`;
        break;
    }
  }
  let problem = violation.message === "" ? `breaks the rule ${violation.ruleId}` : violation.message;
  // A map's keys and values share the entry's path: say which of the two is wrong.
  if (violation.field.at(-1)?.kind === "map_sub") problem = `${violation.forKey ? "key" : "value"} ${problem}`;
  return { field: celSubPath(violation, path) ?? (path === "" ? "body" : path), problem };
}

/** The JSON path a CEL rule's id names below its field's (`to.name` for a rule on `to`), if it names one. */
function celSubPath(violation: Violation, path: string): string | undefined {
  const rule = violation.rule[0];
  const isCel = rule !== undefined && rule.kind === "field" && (rule.name === "cel" || rule.name === "cel_expression");
  return isCel && path !== "" && violation.ruleId.startsWith(`${path}.`) ? violation.ruleId : undefined;
}
