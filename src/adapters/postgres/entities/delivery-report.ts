import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * A delivery report that changed no status, kept 7 days for operators
 * (src/capabilities/delivery-reports). Written and read through
 * MikroORM (../delivery-reports/report-store.ts). Table `delivery_report`; the DDL is
 * in ../migrations/Migration20251130000000_delivery_reports.ts (its kinds
 * narrowed by a later migration).
 */
export const DeliveryReportSchema = defineEntity({
  name: "DeliveryReport",
  tableName: "delivery_report",
  properties: {
    id: p.uuid().primary(),
    source: p.text().check("source IN ('smtp', 'ses')"),
    kind: p.text().check("kind IN ('unmatched', 'delayed', 'soft_bounce')"),
    reason: p.text(),
    companyId: p.uuid().nullable(),
    messageId: p.uuid().nullable(),
    fromText: p.text().nullable(),
    subject: p.text().nullable(),
    excerpt: p.text().default(""),
    receivedAt: p.datetime(),
    expiresAt: p.datetime(),
  },
  indexes: [
    { properties: "expiresAt", name: "delivery_report_expiry_index" },
    { properties: ["companyId", "receivedAt"], name: "delivery_report_company_index" },
  ],
});

export type DeliveryReport = InferEntity<typeof DeliveryReportSchema>;
