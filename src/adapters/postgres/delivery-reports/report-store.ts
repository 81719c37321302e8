import { randomUUID } from "node:crypto";
import type { Pool } from "../sql.ts";
import { toDate } from "../sql.ts";
import { recipientDomainOf } from "../messages/message-store.ts";
import {
  type DeliveryReportStore,
  type KeptReportKind,
  REPORT_RETENTION_DAYS,
  type ReportedMessage,
  type StoredReport,
} from "../../../capabilities/delivery-reports/ports.ts";

interface MessageRow {
  company_id: string;
  id: string;
  provider: string | null;
  provider_message_id: string | null;
  from_email: string;
}

interface ReportRow {
  id: string;
  source: "smtp" | "ses";
  kind: KeptReportKind;
  reason: string;
  company_id: string | null;
  message_id: string | null;
  from_text: string | null;
  subject: string | null;
  excerpt: string;
  received_at: string | Date;
  expires_at: string | Date;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function reported(row: MessageRow): ReportedMessage {
  return {
    companyId: row.company_id,
    messageId: row.id,
    provider: row.provider,
    providerMessageId: row.provider_message_id,
    sendingDomain: recipientDomainOf(row.from_email),
  };
}

/** Plain SQL: the lookups of the message a report names, and the kept reports. */
export function postgresDeliveryReportStore(db: () => Promise<Pool>): DeliveryReportStore {
  return {
    async messageById(messageId) {
      if (!UUID.test(messageId)) return undefined;
      const pool = await db();
      // By id alone: the id comes from a VERP address whose MAC was checked (see the port).
      const { rows } = await pool.query<MessageRow>(
        "select company_id, id, provider, provider_message_id, from_email from message where id = $1",
        [messageId],
      );
      return rows[0] ? reported(rows[0]) : undefined;
    },

    async messageByProviderId(provider, providerMessageId) {
      const pool = await db();
      const { rows } = await pool.query<MessageRow>(
        "select company_id, id, provider, provider_message_id, from_email from message where provider = $1 and provider_message_id = $2 limit 1",
        [provider, providerMessageId],
      );
      return rows[0] ? reported(rows[0]) : undefined;
    },

    async keep(report) {
      const pool = await db();
      await pool.query("delete from delivery_report where expires_at < now()");
      const expiresAt = new Date(report.receivedAt.getTime() + REPORT_RETENTION_DAYS * 24 * 3600 * 1000);
      await pool.query(
        `insert into delivery_report (id, source, kind, reason, company_id, message_id, from_text, subject, excerpt, received_at, expires_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          randomUUID(),
          report.source,
          report.kind,
          report.reason.slice(0, 500),
          report.companyId ?? null,
          report.messageId ?? null,
          report.summary.from ?? null,
          report.summary.subject ?? null,
          report.summary.excerpt,
          report.receivedAt,
          expiresAt,
        ],
      );
    },

    async list(query) {
      const pool = await db();
      const { rows } = await pool.query<ReportRow>(
        `select * from delivery_report
          where expires_at > now()
            and ($1::uuid is null or company_id = $1::uuid)
            and ($2::text is null or kind = $2::text)
          order by received_at desc, id
          limit $3`,
        [query.companyId ?? null, query.kind ?? null, Math.min(Math.max(query.limit, 1), 500)],
      );
      return rows.map(
        (row): StoredReport => ({
          id: row.id,
          source: row.source,
          kind: row.kind,
          reason: row.reason,
          ...(row.company_id ? { companyId: row.company_id } : {}),
          ...(row.message_id ? { messageId: row.message_id } : {}),
          summary: {
            ...(row.from_text ? { from: row.from_text } : {}),
            ...(row.subject ? { subject: row.subject } : {}),
            excerpt: row.excerpt,
          },
          receivedAt: toDate(row.received_at),
          expiresAt: toDate(row.expires_at),
        }),
      );
    },
  };
}
