import type { DescMethod, Message } from "@bufbuild/protobuf";
import { validateContactWrite } from "../../capabilities/contacts/validate-write.ts";
import { validateConversion } from "../../capabilities/conversions/index.ts";
import { validateSignupForm } from "../../capabilities/forms/index.ts";
import { validateSend } from "../../capabilities/messages/compose/validate-send.ts";
import { checkDeliveryListQuery } from "../../capabilities/webhooks/index.ts";
import { type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import { IDEMPOTENCY_KEY_HEADER } from "../../contract/names.ts";
import { type CreateFormRequest, SignupFormsService } from "../../gen/mail/v1/forms_pb.js";
import { MailService, type RecordConversionRequest, type SendMessageRequest, type UpsertContactRequest } from "../../gen/mail/v1/mail_pb.js";
import { type ListWebhookDeliveriesRequest, WebhooksService } from "../../gen/mail/v1/webhooks_pb.js";
import { contactWriteFromProto } from "./contacts/contacts-to-proto.ts";
import { conversionInputFromProto } from "./conversions/conversions-to-proto.ts";
import { formDraftOf } from "./forms/forms-to-proto.ts";
import { deliveryListQueryOf } from "./webhooks/webhooks-to-proto.ts";
import { sendCommandOf } from "./mail/mapping.ts";

/**
 * The operations whose own validation names every bad field of a request
 * at once (spec: the 400's "message names each field"), as checks without
 * effects: they read the request and nothing else. When a request breaks
 * the contract's field rules, the contract validation
 * (contract-validation-interceptor.ts) answers before the operation runs;
 * it runs the operation's check too, so that the one answer still names the
 * fields only the operation knows are wrong (`to.email`, an amount, a
 * filter), in the operation's words, beside the contract's. An operation
 * not listed here gets the contract's problems alone; the rest are named
 * once those are fixed.
 */
type OperationCheck = (request: Message, header: Headers) => void;

const CHECKS: ReadonlyMap<DescMethod, OperationCheck> = new Map<DescMethod, OperationCheck>([
  [
    MailService.method.sendMessage,
    (request, header) => {
      // The caller does not count in the validation.
      validateSend(sendCommandOf(request as SendMessageRequest, { companyId: "", keyId: "", actor: { kind: "key" } }, header.get(IDEMPOTENCY_KEY_HEADER)));
    },
  ],
  [MailService.method.upsertContact, (request) => validateContactWrite(contactWriteFromProto(request as UpsertContactRequest), new Date())],
  [MailService.method.recordConversion, (request) => validateConversion(conversionInputFromProto(request as RecordConversionRequest), new Date())],
  [SignupFormsService.method.createForm, (request) => validateSignupForm(formDraftOf(request as CreateFormRequest))],
  [WebhooksService.method.listWebhookDeliveries, (request) => checkDeliveryListQuery(deliveryListQueryOf(request as ListWebhookDeliveriesRequest))],
]);

/**
 * The problems `method`'s own check finds in a request, or none when it has
 * no check. A check that fails otherwise adds nothing: the contract's
 * answer stands on its own.
 */
export function operationProblems(method: DescMethod, request: Message, header: Headers): readonly FieldProblem[] {
  const check = CHECKS.get(method);
  if (!check) return [];
  try {
    check(request, header);
    return [];
  } catch (error) {
    return error instanceof ValidationError ? error.fields : [];
  }
}
