import { ApiKeySchema } from "./api-key.ts";
import { CompanySchema } from "./company.ts";
import { IdempotencyRecordSchema } from "./idempotency-record.ts";
import { RateLimitWindowSchema } from "./rate-limit-window.ts";
import { CreditLedgerSchema } from "./credit-ledger.ts";
import { CreditWalletSchema } from "./credit-wallet.ts";
import { SenderSchema } from "./sender.ts";
import { SendingDomainSchema } from "./sending-domain.ts";
import { SuppressionSchema } from "./suppression.ts";
import { TemplateSchema } from "./template.ts";
import { MessageSchema } from "./message.ts";
import { MessageEventSchema } from "./message-event.ts";
import { WebhookEventSchema } from "./webhook-event.ts";
import { SendingPaceSchema } from "./sending-pace.ts";
import { SimulatorHandoffSchema } from "./simulator-handoff.ts";

export { ApiKeySchema, type ApiKey } from "./api-key.ts";
export { CompanySchema, type Company } from "./company.ts";
export { IdempotencyRecordSchema, type IdempotencyRecord } from "./idempotency-record.ts";
export { RateLimitWindowSchema, type RateLimitWindow } from "./rate-limit-window.ts";
export { CreditLedgerSchema, type CreditLedger } from "./credit-ledger.ts";
export { CreditWalletSchema, type CreditWallet } from "./credit-wallet.ts";
export { SenderSchema, type Sender } from "./sender.ts";
export { SendingDomainSchema, type SendingDomain } from "./sending-domain.ts";
export { SuppressionSchema, type Suppression } from "./suppression.ts";
export { TemplateSchema, type Template } from "./template.ts";
export { MessageSchema, type Message } from "./message.ts";
export { MessageEventSchema, type MessageEvent } from "./message-event.ts";
export { WebhookEventSchema, type WebhookEvent } from "./webhook-event.ts";
export { SendingPaceSchema, type SendingPace } from "./sending-pace.ts";
export { SimulatorHandoffSchema, type SimulatorHandoff } from "./simulator-handoff.ts";

/** Every entity the ORM knows; passed explicitly (no folder discovery). */
export const ENTITIES = [
  CompanySchema,
  ApiKeySchema,
  RateLimitWindowSchema,
  IdempotencyRecordSchema,
  SendingDomainSchema,
  SenderSchema,
  TemplateSchema,
  CreditWalletSchema,
  CreditLedgerSchema,
  SuppressionSchema,
  MessageSchema,
  MessageEventSchema,
  WebhookEventSchema,
  SendingPaceSchema,
  SimulatorHandoffSchema,
] as const;
