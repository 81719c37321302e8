import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../config.ts";
import { publicBaseUrlOf } from "../config.ts";
import { postgresOwnerDirectory } from "../adapters/postgres/owner-notices/owner-directory.ts";
import type { MessageAcceptance } from "../capabilities/messages/accept/message-acceptance.ts";
import { OwnerNotices, type SystemMailer } from "../capabilities/owner-notices/index.ts";

export interface OwnerNoticesWiring {
  readonly orm: MikroORM;
  readonly config: Pick<Config, "systemSenderCompanyId" | "publicBaseUrl" | "host" | "httpPort">;
  /** The send use case: notices are the system sender company's system mail. */
  readonly messages: Pick<MessageAcceptance, "send">;
}

/** Owner notices on the process's send path; without SYSTEM_SENDER_COMPANY_ID nothing can be emailed (notify says so). */
export function createOwnerNotices(wiring: OwnerNoticesWiring): OwnerNotices {
  const systemCompany = wiring.config.systemSenderCompanyId;
  const mailer: SystemMailer | undefined = systemCompany
    ? {
        async send(mail) {
          const sent = await wiring.messages.send({
            companyId: systemCompany,
            origin: { kind: "system" },
            to: mail.to,
            subject: mail.subject,
            html: mail.html,
            text: mail.text,
            tags: mail.tags,
            idempotencyKey: mail.idempotencyKey,
          });
          return { replayed: sent.replayed };
        },
      }
    : undefined;
  return new OwnerNotices({ owners: postgresOwnerDirectory(wiring.orm), mailer, publicBaseUrl: publicBaseUrlOf(wiring.config) });
}
