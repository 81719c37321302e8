import type { MikroORM } from "@mikro-orm/postgresql";
import type { Config } from "../config.ts";
import { PostgresCreditsStore } from "../adapters/postgres/credits/postgres-credits-store.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { Credits, type LowCreditsAlert, lowCreditsEmail } from "../capabilities/credits/index.ts";
import type { OwnerNotices } from "../capabilities/owner-notices/index.ts";

export interface CreditsWiringOptions {
  readonly config: Pick<Config, "cursorSecret" | "lowCreditsThreshold">;
  /** Tells the owners when a charge leaves the balance low; none: nobody is told. */
  readonly lowCreditsAlert?: LowCreditsAlert;
  readonly clock?: () => Date;
}

/** The credits capability on an open ORM (see src/adapters/postgres/orm.ts). */
export function createCredits(orm: MikroORM, options: CreditsWiringOptions): Credits {
  return new Credits({
    store: new PostgresCreditsStore(poolOf(orm)),
    cursorSecret: options.config.cursorSecret,
    lowThreshold: options.config.lowCreditsThreshold,
    lowCreditsAlert: options.lowCreditsAlert,
    ...(options.clock ? { clock: options.clock } : {}),
  });
}

/**
 * Low credits as an owner notice (system mail, once per owner and day). A
 * notice that fails is logged and tried again by a later charge; it never
 * fails the charge, which belongs to a message being handed over.
 */
export function lowCreditsByOwnerNotice(notices: () => OwnerNotices, log: { warn(details: Record<string, unknown>, message: string): void }): LowCreditsAlert {
  return {
    async creditsLow(notice) {
      try {
        await notices().notify({ companyId: notice.companyId, companyName: notice.companyName, kind: "credits_low", at: notice.at, ...lowCreditsEmail(notice) });
        return true;
      } catch (error) {
        log.warn({ err: error, companyId: notice.companyId }, "the low-credits notice could not be sent; a later charge tries again");
        return false;
      }
    },
  };
}
