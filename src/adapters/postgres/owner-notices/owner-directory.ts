import type { OwnerDirectory } from "../../../capabilities/owner-notices/index.ts";
import type { Pool } from "../sql.ts";

/** The OwnerDirectory port on PostgreSQL: the enabled owners of one company. */
export function postgresOwnerDirectory(db: () => Promise<Pool>): OwnerDirectory {
  return {
    async activeOwners({ companyId }) {
      const pool = await db();
      const { rows } = await pool.query<{ email: string }>(
        `select m.email from member m where m.company_id = $1 and m.role = 'owner' and m.disabled_at is null order by m.email`,
        [companyId],
      );
      return rows.map((row) => row.email);
    },
  };
}
