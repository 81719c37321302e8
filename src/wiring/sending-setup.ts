import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../config.ts";
import { createDnsVerifier } from "../adapters/dns/dns-verifier.ts";
import { PostgresCompanyDirectory } from "../adapters/postgres/sending-setup/postgres-company-directory.ts";
import { PostgresSenderStore } from "../adapters/postgres/sending-setup/postgres-sender-store.ts";
import { PostgresSendingDomainStore } from "../adapters/postgres/sending-setup/postgres-sending-domain-store.ts";
import type { OwnerNotices } from "../capabilities/owner-notices/index.ts";
import { PostgresTemplateStore } from "../adapters/postgres/sending-setup/postgres-template-store.ts";
import {
  createSecretSealer,
  domainDegradedEmail,
  type DnsVerifier,
  type DomainDegradedAlert,
  type DomainLifecycle,
  Senders,
  SendingDomains,
  type SendingSetup,
  Templates,
  TemplateTestSends,
} from "../capabilities/sending-setup/index.ts";
import type { MessageAcceptance } from "../capabilities/messages/accept/message-acceptance.ts";

export type SendingSetupConfig = Pick<
  Config,
  "dataEncryptionKey" | "spfInclude" | "returnPathMxHost" | "dnsServers" | "allowVerificationOverride"
> &
  // The keys with ids (DATA_ENCRYPTION_KEYS); optional: a configuration built in code may name one key only.
  Partial<Pick<Config, "dataEncryptionKeys">>;

export interface SendingSetupOptions {
  /** The time DNS checks are recorded at. Default: the system clock. */
  readonly clock?: () => Date;
  /** Replaces the DNS lookups (default: a Resolver on config.dnsServers). */
  readonly verifier?: DnsVerifier;
  /** A sender or a domain's verification changed in this process (see SendersDependencies.onSendersChanged). */
  readonly onSendersChanged?: () => void;
  /** Tells the owners when a verified domain loses a record (domainDegradedByOwnerNotice); none: nobody is told. */
  readonly degradedAlert?: DomainDegradedAlert;
  /** Starts and ends each domain's re-check workflow; none: only "check now" checks. */
  readonly lifecycle?: DomainLifecycle;
}

/**
 * A degraded domain as an owner notice (system mail, once per owner, domain
 * and day). A notice that fails is logged: the check that found it is
 * answered anyway, and the next check that sees the fall again does not
 * notify (the domain is degraded already), so the screen is the lasting sign.
 */
export function domainDegradedByOwnerNotice(notices: () => OwnerNotices, log: { warn(details: Record<string, unknown>, message: string): void }): DomainDegradedAlert {
  return {
    async domainDegraded(notice) {
      try {
        await notices().notify({
          companyId: notice.companyId,
          companyName: "",
          kind: "domain_degraded",
          at: notice.at,
          // One notice per domain and day (two domains falling the same day are two notices).
          period: `${notice.domainId}:${notice.at.toISOString().slice(0, 10)}`,
          ...domainDegradedEmail(notice),
        });
      } catch (error) {
        log.warn({ err: error, companyId: notice.companyId, domainId: notice.domainId }, "the degraded-domain notice could not be sent");
      }
    },
  };
}

/** The sending setup on an open ORM (see src/adapters/postgres/orm.ts). */
export function createSendingSetup(orm: MikroORM, config: SendingSetupConfig, options: SendingSetupOptions = {}): SendingSetup {
  const sealer = createSecretSealer(config.dataEncryptionKey, config.dataEncryptionKeys);
  const dns = { spfInclude: config.spfInclude, returnPathMxHost: config.returnPathMxHost };
  const verifier = options.verifier ?? createDnsVerifier({ ...dns, servers: config.dnsServers });
  const companies = new PostgresCompanyDirectory(orm);
  const domains = new PostgresSendingDomainStore(orm);
  return {
    domains: new SendingDomains({
      companies,
      store: domains,
      sealer,
      verifier,
      dns,
      allowVerificationOverride: config.allowVerificationOverride,
      clock: options.clock ?? (() => new Date()),
      ...(options.onSendersChanged ? { onSendersChanged: options.onSendersChanged } : {}),
      ...(options.degradedAlert ? { degradedAlert: options.degradedAlert } : {}),
      ...(options.lifecycle ? { lifecycle: options.lifecycle } : {}),
    }),
    senders: new Senders({
      companies,
      domains,
      store: new PostgresSenderStore(orm),
      sealer,
      ...(options.onSendersChanged ? { onSendersChanged: options.onSendersChanged } : {}),
    }),
    templates: new Templates({ companies, store: new PostgresTemplateStore(orm) }),
  };
}

/** Test sends of templates on the process's send path: a normal message with the member as its origin. */
export function createTemplateTestSends(orm: MikroORM, templates: Templates, messages: Pick<MessageAcceptance, "send">): TemplateTestSends {
  return new TemplateTestSends({
    templates,
    store: new PostgresTemplateStore(orm),
    mailer: {
      async send(mail) {
        const sent = await messages.send({
          companyId: mail.companyId,
          origin: { kind: "member", memberId: mail.memberId },
          to: mail.to,
          templateId: mail.templateId,
          variables: mail.variables,
        });
        return { messageId: sent.id };
      },
    },
  });
}
