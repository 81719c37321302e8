/**
 * Webhook endpoints through MikroORM, always per company: every read and
 * write filters on the caller's companyId. Each method works on its own
 * EntityManager fork.
 */
import { LockMode } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type {
  EndpointAdmission,
  EndpointChanges,
  EndpointDraft,
  EndpointRecord,
  SecretRotation,
  WebhookEndpointStore,
} from "../../../capabilities/webhooks/ports.ts";
import { CompanySchema, WebhookEndpointSchema, type WebhookEndpoint } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import type { AuditNote } from "../../../capabilities/audit/types.ts";
import { persistAuditRow } from "../audit/audit-rows.ts";

export class PostgresWebhookEndpointStore implements WebhookEndpointStore {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  /**
   * Under a per-company transaction lock, so that concurrent creates and
   * URL changes see each other: `admit` judges the company's endpoints as
   * they are, and what it throws rolls the create back.
   */
  async create(companyId: string, draft: EndpointDraft, admit?: EndpointAdmission, audit?: AuditNote): Promise<EndpointRecord> {
    return this.#em().transactional(async (em) => {
      if (admit) admit(await lockedEndpoints(em, companyId));
      const endpoint = em.create(WebhookEndpointSchema, {
        id: draft.id,
        company: em.getReference(CompanySchema, companyId),
        url: draft.url,
        description: draft.description,
        events: [...draft.events],
        enabled: draft.enabled,
        secretSealed: draft.secretSealed,
      });
      // The audit row goes with the same flush (one transaction).
      if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "webhook_endpoint", targetId: draft.id });
      await em.flush();
      return endpointRecord(endpoint, companyId);
    });
  }

  async find(companyId: string, endpointId: string): Promise<EndpointRecord | null> {
    const endpoint = await findForCompany(this.#em(), companyId, endpointId);
    return endpoint ? endpointRecord(endpoint, companyId) : null;
  }

  async list(companyId: string): Promise<EndpointRecord[]> {
    if (!isUuid(companyId)) return [];
    const endpoints = await this.#em().find(WebhookEndpointSchema, { company: companyId }, { orderBy: { createdAt: "asc", id: "asc" } });
    return endpoints.map((endpoint) => endpointRecord(endpoint, companyId));
  }

  async update(
    companyId: string,
    endpointId: string,
    changes: EndpointChanges,
    admit?: EndpointAdmission,
    audit?: AuditNote,
  ): Promise<EndpointRecord | null> {
    return this.#em().transactional(async (em) => {
      if (admit) admit((await lockedEndpoints(em, companyId)).filter((other) => other.id !== endpointId));
      const endpoint = await findForCompany(em, companyId, endpointId);
      if (!endpoint) return null;
      if (changes.url !== undefined) endpoint.url = changes.url;
      if (changes.description !== undefined) endpoint.description = changes.description;
      if (changes.events !== undefined) endpoint.events = [...changes.events];
      if (changes.enabled !== undefined) endpoint.enabled = changes.enabled;
      endpoint.updatedAt = new Date();
      if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "webhook_endpoint", targetId: endpointId });
      await em.flush();
      return endpointRecord(endpoint, companyId);
    });
  }

  async rotateSecret(
    companyId: string,
    endpointId: string,
    plan: (current: EndpointRecord) => SecretRotation,
    audit?: AuditNote,
  ): Promise<EndpointRecord | null> {
    return this.#em().transactional(async (em) => {
      const endpoint = await findForCompany(em, companyId, endpointId, LockMode.PESSIMISTIC_WRITE);
      if (!endpoint) return null;
      const rotation = plan(endpointRecord(endpoint, companyId));
      endpoint.secretSealed = rotation.secretSealed;
      endpoint.previousSecretSealed = rotation.previousSecretSealed;
      endpoint.previousSecretExpiresAt = rotation.previousSecretExpiresAt;
      endpoint.updatedAt = new Date();
      if (audit) persistAuditRow(em, companyId, { ...audit, targetType: "webhook_endpoint", targetId: endpointId });
      await em.flush();
      return endpointRecord(endpoint, companyId);
    });
  }

  async delete(companyId: string, endpointId: string, audit?: AuditNote): Promise<boolean> {
    if (!isUuid(companyId) || !isUuid(endpointId)) return false;
    return this.#em().transactional(async (em) => {
      const deleted = (await em.nativeDelete(WebhookEndpointSchema, { id: endpointId, company: companyId })) > 0;
      if (deleted && audit) {
        persistAuditRow(em, companyId, { ...audit, targetType: "webhook_endpoint", targetId: endpointId });
        await em.flush();
      }
      return deleted;
    });
  }

  #em(): EntityManager {
    return this.#orm.em.fork();
  }
}

/** The company's endpoints, after taking the company's endpoint lock for the rest of the transaction. */
async function lockedEndpoints(em: EntityManager, companyId: string): Promise<EndpointRecord[]> {
  if (!isUuid(companyId)) return [];
  await em.execute(`select pg_advisory_xact_lock(hashtextextended('webhook_endpoint:' || ?, 0))`, [companyId]);
  const endpoints = await em.find(WebhookEndpointSchema, { company: companyId }, { orderBy: { createdAt: "asc", id: "asc" } });
  return endpoints.map((endpoint) => endpointRecord(endpoint, companyId));
}

async function findForCompany(em: EntityManager, companyId: string, endpointId: string, lockMode?: LockMode): Promise<WebhookEndpoint | null> {
  if (!isUuid(companyId) || !isUuid(endpointId)) return null;
  return em.findOne(WebhookEndpointSchema, { id: endpointId, company: companyId }, lockMode ? { lockMode } : {});
}

function endpointRecord(endpoint: WebhookEndpoint, companyId: string): EndpointRecord {
  return {
    id: endpoint.id,
    companyId,
    url: endpoint.url,
    description: endpoint.description ?? null,
    events: [...endpoint.events],
    enabled: endpoint.enabled,
    secretSealed: endpoint.secretSealed,
    previousSecretSealed: endpoint.previousSecretSealed ?? null,
    previousSecretExpiresAt: endpoint.previousSecretExpiresAt ?? null,
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt,
  };
}
