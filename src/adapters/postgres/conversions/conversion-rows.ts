import type { JsonObject } from "@bufbuild/protobuf";
import {
  amountFromDatabase,
  type ConversionEventType,
  type ConversionRecord,
  type ConversionStatus,
} from "../../../capabilities/conversions/index.ts";
import { toDate } from "../sql.ts";

/** A `conversion` row as PostgreSQL answers it (numeric as text; timestamptz as text through the ORM pool, Date through a plain one). */
export interface ConversionRow {
  id: string;
  company_id: string;
  event_id: string;
  event_type: ConversionEventType;
  contact_id: string | null;
  email: string | null;
  customer_ref: string | null;
  revenue: string;
  currency: string;
  status: ConversionStatus;
  refunded_amount: string;
  occurred_at: string | Date;
  metadata: JsonObject;
  campaign_id: string | null;
  link_id: string | null;
  clicked_at: string | Date | null;
  version: number;
  created_at: string | Date;
  updated_at: string | Date;
}

export function conversionFromRow(row: ConversionRow): ConversionRecord {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    contactId: row.contact_id,
    email: row.email,
    customerRef: row.customer_ref,
    revenue: amountFromDatabase(row.revenue),
    currency: row.currency,
    status: row.status,
    refundedAmount: amountFromDatabase(row.refunded_amount),
    occurredAt: toDate(row.occurred_at),
    metadata: row.metadata,
    campaignId: row.campaign_id,
    linkId: row.link_id,
    clickedAt: toDate(row.clicked_at),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
    version: row.version,
  };
}
