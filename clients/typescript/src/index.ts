export {
  COMPANY_SERVICES,
  type CompanyServices,
  createMailClient,
  IDEMPOTENCY_KEY_HEADER,
  type MailClient,
  type MailClientOptions,
} from "./client.js";
export { recipient } from "./recipient.js";
export { type CallFacts, ERROR_DOMAIN, MailApiError, type MailErrorCode } from "./errors.js";
export { DEFAULT_RETRY, type RetryEvent, type RetryOptions } from "./retry.js";

// The contract's messages, enums and service descriptors of the company
// services, for typing requests and reading answers
// (`MessageStatus.QUEUED`, `SendMessageRequest`). Everything else generated
// is under `@mail-api/client/gen/<path>_pb`.
export * from "./gen/mail/v1/mail_pb.js";
export * from "./gen/mail/v1/webhooks_pb.js";
export * from "./gen/mail/v1/lists_pb.js";
export * from "./gen/mail/v1/forms_pb.js";
export * from "./gen/mail/v1/templates_pb.js";
export * from "./gen/mail/v1/reports_pb.js";
export * from "./gen/mail/v1/integrations_pb.js";
export * from "./gen/mail/v1/audit_pb.js";
export * from "./gen/mail/v1/errors_pb.js";
