import type { Pool } from "../sql.ts";
import type { MessageContentStore } from "../../../capabilities/messages/ports.ts";

interface ContentRow {
  id: string;
  html: string | null;
  text_body: string | null;
  from_email: string;
  from_name: string | null;
  reply_to: string | null;
  system: boolean;
}

/** The MessageContentStore port on PostgreSQL: one statement by primary key, scoped by company. */
export function postgresMessageContent(pool: () => Promise<Pool>): MessageContentStore {
  return {
    async content(companyId, id) {
      const db = await pool();
      const { rows } = await db.query<ContentRow>({
        // The service's own mail is read without its (sealed) body: no read ever shows it.
        text: `select m.id, case when m.system then null else m.html end as html,
                      case when m.system then null else m.text_body end as text_body,
                      m.from_email, m.from_name, m.reply_to, m.system
                 from message m
                where m.company_id = $1 and m.id = $2`,
        values: [companyId, id],
      });
      const row = rows[0];
      if (!row) return undefined;
      return {
        id: row.id,
        html: row.html,
        text: row.text_body,
        fromEmail: row.from_email,
        fromName: row.from_name,
        replyTo: row.reply_to,
        withheld: row.system,
      };
    },
  };
}
