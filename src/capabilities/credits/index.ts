import type { MikroORM } from "@mikro-orm/postgresql";
import { poolOf } from "../../adapters/postgres/sql.ts";
import { CreditsService } from "./credits-service.ts";

export {
  CreditsService,
  MAX_ADJUSTMENT,
  MAX_LEDGER_PAGE,
  type ChargeOutcome,
  type LedgerEntry,
  type RefundOutcome,
  type Wallet,
} from "./credits-service.ts";
export type { LedgerReason } from "../../adapters/postgres/repositories/credit-repository.ts";

/** Wires the credits domain on an open ORM (see src/persistence/orm.ts). */
export function createCredits(orm: MikroORM): CreditsService {
  return new CreditsService({ orm, pool: poolOf(orm) });
}
