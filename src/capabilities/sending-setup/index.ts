import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../../config.ts";
import { SendingDomainService } from "./domains.ts";
import { createDnsVerifier, type DnsVerifier } from "../../adapters/dns/dns-verifier.ts";
import { createSecretSealer } from "./key-sealing.ts";
import { SenderService } from "./senders.ts";
import { TemplateService } from "./templates.ts";

export type { ResolvedSender, SendableSender, SenderDirectory, StoredTemplate, TemplateStore } from "./types.ts";
export type { SenderView, SendingDomainView, TemplateView } from "./views.ts";
export type { DnsRecordPurpose, DnsRecordView } from "./dns-records.ts";
export type { DnsVerifier } from "../../adapters/dns/dns-verifier.ts";
export type { NewSenderInput } from "./senders.ts";
export type { TemplateInput } from "./validation.ts";
export { SendingDomainService } from "./domains.ts";
export { SenderService } from "./senders.ts";
export { TemplateService } from "./templates.ts";
export { createSecretSealer, type SecretSealer } from "./key-sealing.ts";

export type SendingSetupConfig = Pick<
  Config,
  "dataEncryptionKey" | "spfInclude" | "returnPathMxHost" | "dnsServers" | "allowVerificationOverride"
>;

export interface SendingSetupOptions {
  /** Current time; tests pass a fake one. Default: the system clock. */
  readonly clock?: () => Date;
  /** Replaces the DNS lookups (default: a Resolver on config.dnsServers). */
  readonly verifier?: DnsVerifier;
}

/** Sending domains, senders and templates of companies. */
export interface SendingSetup {
  readonly domains: SendingDomainService;
  /** Also the SenderDirectory of the send path (`resolveSender`). */
  readonly senders: SenderService;
  /** Also the TemplateStore of the send path (`getTemplate`). */
  readonly templates: TemplateService;
}

/** Wires the sending setup on an open ORM (see src/persistence/orm.ts). */
export function createSendingSetup(orm: MikroORM, config: SendingSetupConfig, options: SendingSetupOptions = {}): SendingSetup {
  const sealer = createSecretSealer(config.dataEncryptionKey);
  const dns = { spfInclude: config.spfInclude, returnPathMxHost: config.returnPathMxHost };
  const verifier = options.verifier ?? createDnsVerifier({ ...dns, servers: config.dnsServers });
  return {
    domains: new SendingDomainService({
      orm,
      sealer,
      verifier,
      dns,
      allowVerificationOverride: config.allowVerificationOverride,
      clock: options.clock ?? (() => new Date()),
    }),
    senders: new SenderService({ orm, sealer }),
    templates: new TemplateService({ orm }),
  };
}
