import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../config.ts";
import { PostgresSendingGuardStore } from "../adapters/postgres/deliverability/postgres-sending-guard-store.ts";
import { SendingGuard, type SuspensionAlert, suspensionEmail } from "../capabilities/deliverability/index.ts";
import type { OutcomeWatcher } from "../capabilities/messages/lifecycle/ports.ts";
import type { OwnerNotices } from "../capabilities/owner-notices/index.ts";

interface WarnLog {
  warn(details: Record<string, unknown>, message: string): void;
}

export interface SendingGuardWiringOptions {
  readonly config: Pick<Config, "sendingGuard">;
  /** Tells the owners of a company just suspended; none: nobody is told. */
  readonly alert?: SuspensionAlert;
  readonly clock?: () => Date;
}

/** The sending guard on an open ORM (SENDING_GUARD_* settings). */
export function createSendingGuard(orm: MikroORM, options: SendingGuardWiringOptions): SendingGuard {
  return new SendingGuard({
    store: new PostgresSendingGuardStore(orm),
    limits: options.config.sendingGuard,
    alert: options.alert,
    ...(options.clock ? { clock: options.clock } : {}),
  });
}

/**
 * A suspension as an owner notice: system mail, once per owner and
 * suspension (the notice's period is the suspension's time, so a later
 * suspension emails again). A notice that fails is logged; the suspension
 * stands and shows in the screen.
 */
export function suspensionByOwnerNotice(notices: () => OwnerNotices, log: WarnLog): SuspensionAlert {
  return {
    async sendingSuspended(notice) {
      try {
        await notices().notify({
          companyId: notice.companyId,
          companyName: notice.companyName,
          kind: "sending_suspended",
          at: notice.suspension.suspendedAt,
          period: notice.suspension.suspendedAt.toISOString(),
          ...suspensionEmail(notice),
        });
      } catch (error) {
        log.warn({ err: error, companyId: notice.companyId }, "the owners could not be told of the sending suspension");
      }
    },
  };
}

/**
 * The guard as the provider events' watcher. A judgement that fails is
 * logged and never fails the report (the outcome is recorded by then); the
 * company's next bounce or complaint judges the same window again.
 */
export function guardWatcher(guard: SendingGuard, log: WarnLog): OutcomeWatcher {
  return {
    async bounceOrComplaintRecorded(command) {
      try {
        await guard.outcomeRecorded(command);
      } catch (error) {
        log.warn({ err: error, companyId: command.companyId }, "the sending guard could not judge the company's recent sends; its next bounce or complaint does");
      }
    },
  };
}
