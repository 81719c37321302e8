/**
 * Webhook endpoints through MikroORM, always per company: every read and
 * write filters on the caller's companyId. Each method works on its own
 * EntityManager fork.
 */
import { LockMode } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type {
  EndpointChanges,
  EndpointDraft,
  EndpointRecord,
  SecretRotation,
  WebhookEndpointStore,
} from "../../../capabilities/webhooks/ports.ts";
import { CompanySchema, WebhookEndpointSchema, type WebhookEndpoint } from "../entities/index.ts";
import { isUuid } from "../ids.ts";

export class PostgresWebhookEndpointStore implements WebhookEndpointStore {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  async create(companyId: string, draft: EndpointDraft): Promise<EndpointRecord> {
    const em = this.#em();
    const endpoint = em.create(WebhookEndpointSchema, {
      id: draft.id,
      company: em.getReference(CompanySchema, companyId),
      url: draft.url,
      description: draft.description,
      events: [...draft.events],
      enabled: draft.enabled,
      secretSealed: draft.secretSealed,
    });
    await em.flush();
    return endpointRecord(endpoint, companyId);
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

  async update(companyId: string, endpointId: string, changes: EndpointChanges): Promise<EndpointRecord | null> {
    const em = this.#em();
    const endpoint = await findForCompany(em, companyId, endpointId);
    if (!endpoint) return null;
    if (changes.url !== undefined) endpoint.url = changes.url;
    if (changes.description !== undefined) endpoint.description = changes.description;
    if (changes.events !== undefined) endpoint.events = [...changes.events];
    if (changes.enabled !== undefined) endpoint.enabled = changes.enabled;
    endpoint.updatedAt = new Date();
    await em.flush();
    return endpointRecord(endpoint, companyId);
  }

  async rotateSecret(companyId: string, endpointId: string, plan: (current: EndpointRecord) => SecretRotation): Promise<EndpointRecord | null> {
    return this.#em().transactional(async (em) => {
      const endpoint = await findForCompany(em, companyId, endpointId, LockMode.PESSIMISTIC_WRITE);
      if (!endpoint) return null;
      const rotation = plan(endpointRecord(endpoint, companyId));
      endpoint.secretSealed = rotation.secretSealed;
      endpoint.previousSecretSealed = rotation.previousSecretSealed;
      endpoint.previousSecretExpiresAt = rotation.previousSecretExpiresAt;
      endpoint.updatedAt = new Date();
      await em.flush();
      return endpointRecord(endpoint, companyId);
    });
  }

  async delete(companyId: string, endpointId: string): Promise<boolean> {
    if (!isUuid(companyId) || !isUuid(endpointId)) return false;
    return (await this.#em().nativeDelete(WebhookEndpointSchema, { id: endpointId, company: companyId })) > 0;
  }

  #em(): EntityManager {
    return this.#orm.em.fork();
  }
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
