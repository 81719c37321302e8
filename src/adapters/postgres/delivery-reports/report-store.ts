/**
 * The delivery report store through MikroORM, each method on its own
 * EntityManager fork: the lookups of the message a report names, and the
 * reports kept for operators. Neither is a hot path (one lookup per inbound
 * report, an operator's listing).
 */
import { randomUUID } from "node:crypto";
import { raw, type Loaded } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { DeliveryReportSchema, MessageSchema, type DeliveryReport, type Message } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { recipientDomainOf } from "../messages/message-store.ts";
import {
  type DeliveryReportStore,
  type KeptReport,
  type KeptReportKind,
  REPORT_RETENTION_DAYS,
  type ReportedMessage,
  type StoredReport,
} from "../../../capabilities/delivery-reports/ports.ts";

/** The columns of a message a report needs. */
const REPORTED_FIELDS = ["company", "provider", "providerMessageId", "fromEmail"] as const;

/** The database's clock decides expiry: every process agrees on it, whatever its own clock says. */
const NOW = raw("now()");

export function postgresDeliveryReportStore(orm: MikroORM): DeliveryReportStore {
  /** A fresh EntityManager per operation. */
  const em = (): EntityManager => orm.em.fork();

  return {
    async messageById(messageId) {
      if (!isUuid(messageId)) return undefined;
      // By id alone: the id comes from a VERP address whose MAC was checked (see the port).
      const message = await em().findOne(MessageSchema, { id: messageId }, { fields: REPORTED_FIELDS });
      return message ? reported(message) : undefined;
    },

    async messageByProviderId(provider, providerMessageId) {
      const message = await em().findOne(MessageSchema, { provider, providerMessageId }, { fields: REPORTED_FIELDS });
      return message ? reported(message) : undefined;
    },

    async keep(report) {
      const fork = em();
      await fork.nativeDelete(DeliveryReportSchema, { expiresAt: { $lt: NOW } });
      await fork.insert(DeliveryReportSchema, reportRow(report));
    },

    async list(query) {
      if (query.companyId !== undefined && !isUuid(query.companyId)) return [];
      const reports = await em().find(
        DeliveryReportSchema,
        {
          expiresAt: { $gt: NOW },
          ...(query.companyId !== undefined ? { companyId: query.companyId } : {}),
          ...(query.kind !== undefined ? { kind: query.kind } : {}),
        },
        { orderBy: { receivedAt: "desc", id: "asc" }, limit: Math.min(Math.max(query.limit, 1), 500) },
      );
      return reports.map(storedReport);
    },
  };
}

function reported(message: Loaded<Message, never, (typeof REPORTED_FIELDS)[number]>): ReportedMessage {
  return {
    companyId: message.company.id,
    messageId: message.id,
    provider: message.provider ?? null,
    providerMessageId: message.providerMessageId ?? null,
    sendingDomain: recipientDomainOf(message.fromEmail),
  };
}

function reportRow(report: KeptReport): DeliveryReport {
  return {
    id: randomUUID(),
    source: report.source,
    kind: report.kind,
    reason: report.reason.slice(0, 500),
    companyId: report.companyId ?? null,
    messageId: report.messageId ?? null,
    fromText: report.summary.from ?? null,
    subject: report.summary.subject ?? null,
    excerpt: report.summary.excerpt,
    receivedAt: report.receivedAt,
    expiresAt: new Date(report.receivedAt.getTime() + REPORT_RETENTION_DAYS * 24 * 3600 * 1000),
  };
}

function storedReport(report: DeliveryReport): StoredReport {
  return {
    id: report.id,
    // The table's check constraints admit only these values.
    source: report.source as StoredReport["source"],
    kind: report.kind as KeptReportKind,
    reason: report.reason,
    ...(report.companyId ? { companyId: report.companyId } : {}),
    ...(report.messageId ? { messageId: report.messageId } : {}),
    summary: {
      ...(report.fromText ? { from: report.fromText } : {}),
      ...(report.subject ? { subject: report.subject } : {}),
      excerpt: report.excerpt,
    },
    receivedAt: report.receivedAt,
    expiresAt: report.expiresAt,
  };
}
