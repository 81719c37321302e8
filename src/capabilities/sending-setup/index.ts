import type { SendingDomainService } from "./domains.ts";
import type { SenderService } from "./senders.ts";
import type { TemplateService } from "./templates.ts";

export type { ResolvedSender, SendableSender, SenderDirectory, StoredTemplate, TemplateLookup } from "./types.ts";
export type { SenderView, SendingDomainView, TemplateView } from "./views.ts";
export type { DnsCheckState, DnsRecordPurpose, DnsRecordView, DnsSettings, DomainDnsFacts } from "./dns-records.ts";
export type {
  CompanyDirectory,
  DnsVerifier,
  DomainVerification,
  NewSendingDomain,
  SenderDraft,
  SenderRecord,
  SenderStore,
  SendingDomainRecord,
  SendingDomainStore,
  TemplateContent,
  TemplateRecord,
  TemplateStore,
} from "./ports.ts";
export { DnsUnavailableError } from "./ports.ts";
export type { NewSenderInput } from "./senders.ts";
export type { TemplateInput } from "./validation.ts";
export { SendingDomainService, type SendingDomainServiceOptions } from "./domains.ts";
export { SenderService, type SenderServiceOptions } from "./senders.ts";
export { TemplateService, type TemplateServiceOptions } from "./templates.ts";
export { createSecretSealer, type SecretSealer } from "./key-sealing.ts";

/** Sending domains, senders and templates of companies. */
export interface SendingSetup {
  readonly domains: SendingDomainService;
  /** Also the SenderDirectory of the send path (`resolveSender`, `checkSender`). */
  readonly senders: SenderService;
  /** Also the TemplateLookup of the send path (`getTemplate`). */
  readonly templates: TemplateService;
}
