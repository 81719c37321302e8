import type { Pool } from "../sql.ts";
import type { ConfirmationBudget, UsedFormTokens } from "../../../capabilities/forms/hosted/ports.ts";

type Db = () => Promise<Pool>;

/** signup_confirmation_hour: one upsert that counts only while under the cap. */
export function postgresConfirmationBudget(db: Db): ConfirmationBudget {
  return {
    async take(companyId, hourStart, cap) {
      const pool = await db();
      const { rowCount } = await pool.query(
        `insert into signup_confirmation_hour (company_id, hour_start, sent) values ($1, $2, 1)
         on conflict (company_id, hour_start) do update set sent = signup_confirmation_hour.sent + 1
         where signup_confirmation_hour.sent < $3`,
        [companyId, hourStart, cap],
      );
      return (rowCount ?? 0) > 0;
    },
  };
}

/** How often (one claim in this many) the old fingerprints are deleted. */
const CLEANUP_EVERY = 100;

/** signup_form_token_use: the first insert of a fingerprint wins; the others find it taken. */
export function postgresUsedFormTokens(db: Db): UsedFormTokens {
  let claims = 0;
  return {
    async claim(formId, fingerprint, at, forgetBefore) {
      const pool = await db();
      if (++claims % CLEANUP_EVERY === 0) await pool.query(`delete from signup_form_token_use where used_at < $1`, [forgetBefore]);
      const { rowCount } = await pool.query(
        `insert into signup_form_token_use (token_mac, form_id, used_at) values ($1, $2, $3) on conflict (token_mac) do nothing`,
        [fingerprint, formId, at],
      );
      return (rowCount ?? 0) > 0;
    },
  };
}
