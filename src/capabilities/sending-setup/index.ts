import type { SendingDomains } from "./domains.ts";
import type { Senders } from "./senders.ts";
import type { Templates } from "./templates.ts";

export type { ResolvedSender, SendableSender, SenderDirectory, StoredTemplate, TemplateLookup } from "./types.ts";
export { domainStatus, type DomainStatus, type SenderView, type SendingDomainView, type TemplateVersionView, type TemplateView } from "./views.ts";
export type { DnsCheckReport, DnsCheckState, DnsRecordCheck, DnsRecordPurpose, DnsRecordState, DnsRecordView, DnsSettings, DomainDnsFacts } from "./dns-records.ts";
export type {
  CompanyDirectory,
  DnsVerifier,
  DomainRemoval,
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
  TemplateVersionRecord,
} from "./ports.ts";
export { DnsUnavailableError, KEPT_TEMPLATE_VERSIONS } from "./ports.ts";
export type { TemplateInput } from "./validation.ts";
export {
  SendingDomains,
  type CheckSendingDomainCommand,
  type CreateSendingDomainCommand,
  type DeleteSendingDomainCommand,
  domainDegradedEmail,
  type DomainDegradedAlert,
  type DomainDegradedNotice,
  type DomainLifecycle,
  type ListSendingDomainsCommand,
  type OverrideDomainVerificationCommand,
  type SendingDomainCommand,
  type SendingDomainsDependencies,
} from "./domains.ts";
export {
  Senders,
  type CreateSenderCommand,
  type ListSendersCommand,
  type RemoveSenderCommand,
  type SendersDependencies,
  type SetDefaultSenderCommand,
} from "./senders.ts";
export {
  Templates,
  type DeleteTemplateCommand,
  type ListTemplatesCommand,
  type PreviewTemplateCommand,
  type PutTemplateCommand,
  type RestoreTemplateVersionCommand,
  type TemplateCommand,
  type TemplatePreview,
  type TemplatesDependencies,
} from "./templates.ts";
export {
  TemplateTestSends,
  type SendTestTemplateCommand,
  type TemplateTestMail,
  type TemplateTestMailer,
  type TemplateTestSendsDependencies,
  type TemplateTestSent,
  type TestSendRequester,
} from "./template-test-sends.ts";
export { createSecretSealer, type SecretSealer } from "./key-sealing.ts";

/** Sending domains, senders and templates of companies. */
export interface SendingSetup {
  readonly domains: SendingDomains;
  /** Also the SenderDirectory of the send path (`resolveSender`, `checkSender`). */
  readonly senders: Senders;
  /** Also the TemplateLookup of the send path (`getTemplate`). */
  readonly templates: Templates;
}
