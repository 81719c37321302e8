import { raw, type MikroORM } from "@mikro-orm/postgresql";
import type { ConfirmationBudget, UsedFormTokens } from "../../../capabilities/forms/hosted/ports.ts";
import { SignupConfirmationHourSchema, SignupFormTokenUseSchema } from "../entities/index.ts";

/**
 * signup_confirmation_hour: one conditional upsert that counts only while
 * under the cap, so concurrent confirmations never pass it together.
 */
export function postgresConfirmationBudget(orm: MikroORM): ConfirmationBudget {
  return {
    async take(companyId, hourStart, cap) {
      const taken = await orm.em
        .fork()
        .createQueryBuilder(SignupConfirmationHourSchema)
        .insert({ companyId, hourStart, sent: 1 })
        .onConflict(["companyId", "hourStart"])
        .merge({ sent: raw("signup_confirmation_hour.sent + 1") })
        .where(raw("signup_confirmation_hour.sent < ?", [cap]))
        .execute("run");
      return taken.affectedRows > 0;
    },
  };
}

/** How often (one claim in this many) the old fingerprints are deleted. */
const CLEANUP_EVERY = 100;

/** signup_form_token_use: the first insert of a fingerprint wins (`on conflict do nothing`); the others find it taken. */
export function postgresUsedFormTokens(orm: MikroORM): UsedFormTokens {
  let claims = 0;
  return {
    async claim(formId, fingerprint, at, forgetBefore) {
      const em = orm.em.fork();
      if (++claims % CLEANUP_EVERY === 0) await em.nativeDelete(SignupFormTokenUseSchema, { usedAt: { $lt: forgetBefore } });
      const inserted = await em
        .createQueryBuilder(SignupFormTokenUseSchema)
        .insert({ tokenMac: fingerprint, formId, usedAt: at })
        .onConflict("tokenMac")
        .ignore()
        .execute("run");
      return inserted.affectedRows > 0;
    },
  };
}
