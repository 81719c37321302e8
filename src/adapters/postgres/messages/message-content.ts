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
  content_removed: boolean;
}

interface AttachmentRow {
  position: number;
  filename: string;
  content_type: string;
  size: number;
  content_id: string | null;
}

/** The MessageContentStore port on PostgreSQL: statements by primary key, scoped by company. */
export function postgresMessageContent(pool: () => Promise<Pool>): MessageContentStore {
  return {
    async content(companyId, id) {
      const db = await pool();
      const { rows } = await db.query<ContentRow>({
        // The service's own mail is read without its (sealed) body: no read ever shows it.
        text: `select m.id, case when m.system then null else m.html end as html,
                      case when m.system then null else m.text_body end as text_body,
                      m.from_email, m.from_name, m.reply_to, m.system, m.content_removed_at is not null as content_removed
                 from message m
                where m.company_id = $1 and m.id = $2`,
        values: [companyId, id],
      });
      const row = rows[0];
      if (!row) return undefined;
      // The list, never the bytes.
      const files = await db.query<AttachmentRow>({
        text: `select position, filename, content_type, size, content_id from message_attachment
                where company_id = $1 and message_id = $2 order by position`,
        values: [companyId, id],
      });
      return {
        id: row.id,
        html: row.html,
        text: row.text_body,
        fromEmail: row.from_email,
        fromName: row.from_name,
        replyTo: row.reply_to,
        withheld: row.system,
        attachments: files.rows.map((file) => ({
          position: file.position,
          filename: file.filename,
          contentType: file.content_type,
          size: file.size,
          contentId: file.content_id,
        })),
        contentRemoved: row.content_removed,
      };
    },

    async attachment(companyId, messageId, position) {
      const db = await pool();
      const { rows } = await db.query<{ filename: string; content_type: string; content: Buffer }>({
        text: `select filename, content_type, content from message_attachment
                where company_id = $1 and message_id = $2 and position = $3`,
        values: [companyId, messageId, position],
      });
      const row = rows[0];
      return row ? { filename: row.filename, contentType: row.content_type, content: row.content } : undefined;
    },
  };
}
