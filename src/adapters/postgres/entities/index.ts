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
import { TemplateVersionSchema } from "./template-version.ts";
import { MessageSchema } from "./message.ts";
import { MessageEventSchema } from "./message-event.ts";
import { MessageAttachmentSchema } from "./message-attachment.ts";
import { WebhookEventSchema } from "./webhook-event.ts";
import { WebhookEndpointSchema } from "./webhook-endpoint.ts";
import { WebhookDeliverySchema } from "./webhook-delivery.ts";
import { WebhookAttemptSchema } from "./webhook-attempt.ts";
import { SendingPaceSchema } from "./sending-pace.ts";
import { SimulatorHandoffSchema } from "./simulator-handoff.ts";
import { SimulatorEventSchema } from "./simulator-event.ts";
import { ContactSchema } from "./contact.ts";
import { ContactListSchema } from "./contact-list.ts";
import { ContactListMemberSchema } from "./contact-list-member.ts";
import { ConversionSchema } from "./conversion.ts";
import { CampaignClickSchema } from "./campaign-click.ts";
import { CampaignSchema } from "./campaign.ts";
import { CampaignRecipientSchema } from "./campaign-recipient.ts";
import { SignupFormSchema } from "./signup-form.ts";
import { StoreIntegrationSchema } from "./store-integration.ts";
import { StoreOrderSchema } from "./store-order.ts";
import { MemberSchema } from "./member.ts";
import { SignInLinkSchema } from "./sign-in-link.ts";
import { MemberSessionSchema } from "./member-session.ts";
import { AuditEventSchema } from "./audit-event.ts";
import { DeliveryReportSchema } from "./delivery-report.ts";
import { SendingGuardSchema } from "./sending-guard.ts";
import { SendingPaceCompanySchema, SignupConfirmationHourSchema, SignupFormTokenUseSchema } from "./signup-door.ts";
import { TrackingFirstSchema, TrackingHitSchema, TrackingLinkSchema, TrackingRecipientSchema } from "./tracking.ts";
import { MessageStatsHourSchema } from "./message-stats-hour.ts";
import { MessageStatsPendingSchema } from "./message-stats-pending.ts";

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
export { TemplateVersionSchema, type TemplateVersion } from "./template-version.ts";
export { MessageSchema, type Message } from "./message.ts";
export { MessageEventSchema, type MessageEvent } from "./message-event.ts";
export { MessageAttachmentSchema, type MessageAttachment } from "./message-attachment.ts";
export { MessageStatsHourSchema, type MessageStatsHour } from "./message-stats-hour.ts";
export { MessageStatsPendingSchema, type MessageStatsPending } from "./message-stats-pending.ts";
export { WebhookEventSchema, type WebhookEvent } from "./webhook-event.ts";
export { WebhookEndpointSchema, type WebhookEndpoint } from "./webhook-endpoint.ts";
export { WebhookDeliverySchema, type WebhookDelivery } from "./webhook-delivery.ts";
export { WebhookAttemptSchema, type WebhookAttempt } from "./webhook-attempt.ts";
export { SendingPaceSchema, type SendingPace } from "./sending-pace.ts";
export { SimulatorHandoffSchema, type SimulatorHandoff } from "./simulator-handoff.ts";
export { SimulatorEventSchema, type SimulatorEvent } from "./simulator-event.ts";
export { ContactSchema, type Contact } from "./contact.ts";
export { ContactListSchema, type ContactList } from "./contact-list.ts";
export { ContactListMemberSchema, type ContactListMember } from "./contact-list-member.ts";
export { ConversionSchema, type Conversion } from "./conversion.ts";
export { CampaignClickSchema, type CampaignClick } from "./campaign-click.ts";
export { CampaignSchema, type Campaign } from "./campaign.ts";
export { CampaignRecipientSchema, type CampaignRecipient } from "./campaign-recipient.ts";
export { SignupFormSchema, type SignupForm } from "./signup-form.ts";
export { StoreIntegrationSchema, type StoreIntegration } from "./store-integration.ts";
export { StoreOrderSchema, type StoreOrder } from "./store-order.ts";
export { MemberSchema, type Member } from "./member.ts";
export { SignInLinkSchema, type SignInLink } from "./sign-in-link.ts";
export { MemberSessionSchema, type MemberSession } from "./member-session.ts";
export { AuditEventSchema, type AuditEvent } from "./audit-event.ts";
export { DeliveryReportSchema, type DeliveryReport } from "./delivery-report.ts";
export { SendingGuardSchema, type SendingGuard } from "./sending-guard.ts";
export {
  SendingPaceCompanySchema,
  SignupConfirmationHourSchema,
  SignupFormTokenUseSchema,
  type SendingPaceCompany,
  type SignupConfirmationHour,
  type SignupFormTokenUse,
} from "./signup-door.ts";
export {
  TrackingFirstSchema,
  TrackingHitSchema,
  TrackingLinkSchema,
  TrackingRecipientSchema,
  type TrackingFirst,
  type TrackingHit,
  type TrackingLink,
  type TrackingRecipient,
} from "./tracking.ts";

/** Every entity the ORM knows; passed explicitly (no folder discovery). */
export const ENTITIES = [
  CompanySchema,
  ApiKeySchema,
  RateLimitWindowSchema,
  IdempotencyRecordSchema,
  SendingDomainSchema,
  SenderSchema,
  TemplateSchema,
  TemplateVersionSchema,
  CreditWalletSchema,
  CreditLedgerSchema,
  SuppressionSchema,
  MessageSchema,
  MessageEventSchema,
  MessageAttachmentSchema,
  WebhookEventSchema,
  WebhookEndpointSchema,
  WebhookDeliverySchema,
  WebhookAttemptSchema,
  SendingPaceSchema,
  SimulatorHandoffSchema,
  SimulatorEventSchema,
  ContactSchema,
  ContactListSchema,
  ContactListMemberSchema,
  ConversionSchema,
  CampaignClickSchema,
  SignupFormSchema,
  StoreIntegrationSchema,
  StoreOrderSchema,
  MemberSchema,
  SignInLinkSchema,
  MemberSessionSchema,
  AuditEventSchema,
  DeliveryReportSchema,
  SignupFormTokenUseSchema,
  SignupConfirmationHourSchema,
  SendingPaceCompanySchema,
  SendingGuardSchema,
  TrackingRecipientSchema,
  TrackingLinkSchema,
  TrackingHitSchema,
  TrackingFirstSchema,
  CampaignSchema,
  CampaignRecipientSchema,
  MessageStatsHourSchema,
  MessageStatsPendingSchema,
] as const;
