import type { MikroORM } from "@mikro-orm/postgresql";
import { type Config, publicBaseUrlOf } from "../config.ts";
import { PostgresAuditLog } from "../adapters/postgres/audit/postgres-audit-log.ts";
import { PostgresMembersStore } from "../adapters/postgres/members/postgres-members-store.ts";
import type { Companies } from "../capabilities/accounts/index.ts";
import { AuditLog } from "../capabilities/audit/index.ts";
import type { ConfirmationMailer } from "../capabilities/forms/hosted/index.ts";
import { Members, renderSignInEmail, Sessions, type SignInMailer } from "../capabilities/members/index.ts";
import type { RateLimiter } from "../capabilities/rate-limit/types.ts";

export interface MembersWiringOptions {
  readonly orm: MikroORM;
  readonly config: Pick<Config, "publicBaseUrl" | "host" | "httpPort" | "cursorSecret" | "systemSenderCompanyId">;
  readonly rateLimiter: RateLimiter;
  /** The company's name for sign-in emails. */
  readonly companies: Companies;
  /** The service's own send path (createConfirmationMailer); used when SYSTEM_SENDER_COMPANY_ID is set. */
  readonly mailer?: ConfirmationMailer;
  readonly clock?: () => Date;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
}

export interface MembersWiring {
  readonly members: Members;
  readonly sessions: Sessions;
  readonly audit: AuditLog;
  /** Origins the session door accepts besides the request's Host: PUBLIC_BASE_URL's. */
  readonly allowedOrigins: readonly string[];
  close(): Promise<void>;
}

/** Housekeeping runs hourly: audit rows past 400 days, ended sessions, old links. */
const HOUSEKEEPING_MS = 3_600_000;

/** Members, sign-in and sessions, and the audit log on an open ORM. */
export function createMembersWiring(options: MembersWiringOptions): MembersWiring {
  const clock = options.clock ?? (() => new Date());
  const store = new PostgresMembersStore(options.orm);
  const { config } = options;
  const publicBaseUrl = publicBaseUrlOf(config);
  const systemCompany = config.systemSenderCompanyId;
  const confirmations = options.mailer;
  const mailer: SignInMailer | undefined =
    systemCompany && confirmations
      ? {
          async send(mail) {
            const email = renderSignInEmail({ companyName: mail.companyName, url: mail.url, expiresAt: mail.expiresAt });
            await confirmations.send({ companyId: systemCompany, to: mail.to, ...email, idempotencyKey: mail.idempotencyKey, tags: { kind: "sign-in" } });
          },
        }
      : undefined;
  const members = new Members({
    store,
    cursorSecret: config.cursorSecret,
    rateLimiter: options.rateLimiter,
    clock,
    publicBaseUrl,
    mailer,
    companyName: async (companyId) => (await options.companies.get({ companyId })).name,
  });
  const sessions = new Sessions({ store, rateLimiter: options.rateLimiter, clock });
  const audit = new AuditLog({ store: new PostgresAuditLog(options.orm), cursorSecret: config.cursorSecret, clock });
  const housekeeping = setInterval(() => {
    void Promise.all([audit.purgeExpired(), sessions.purgeExpired()]).catch((error: unknown) =>
      options.log.warn({ err: error }, "members housekeeping failed; retried in an hour"),
    );
  }, HOUSEKEEPING_MS);
  housekeeping.unref();
  const allowedOrigins = config.publicBaseUrl ? [new URL(config.publicBaseUrl).origin] : [];
  return {
    members,
    sessions,
    audit,
    allowedOrigins,
    async close() {
      clearInterval(housekeeping);
    },
  };
}
