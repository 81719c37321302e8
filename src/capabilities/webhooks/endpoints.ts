import { randomUUID } from "node:crypto";
import { ApiError, type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import type { SecretSealer } from "../sending-setup/key-sealing.ts";
import { SECRET_ROTATION_OVERLAP_MS } from "./delivery-rules.ts";
import { isWebhookEventName } from "./events.ts";
import type { EndpointChanges, EndpointRecord, WebhookEndpointStore } from "./ports.ts";
import { generateWebhookSecret } from "./signing.ts";
import type { WebhookTargetPolicy } from "./ssrf-policy.ts";

/**
 * Webhook endpoints of a company: create, read, change, delete, rotate the
 * secret (spec: Webhook endpoint and delivery, Webhook authentication).
 *
 * - The URL must be https:// and resolve only to public addresses; a
 *   private, loopback or internal host is refused with
 *   WEBHOOK_HOST_NOT_ALLOWED (checked again before every delivery).
 * - The secret (`whsec_` + 256 random bits) is in the answer of create and
 *   rotate only; it is stored sealed, bound to the endpoint.
 * - After a rotation the previous secret signs too for 24 hours.
 */
export interface EndpointView {
  readonly id: string;
  readonly url: string;
  readonly description: string | null;
  readonly events: readonly string[];
  readonly enabled: boolean;
  /** When the previous secret stops signing; null when only one secret signs. */
  readonly previousSecretExpiresAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** An endpoint with its secret: only in the answers of create and rotate. */
export interface EndpointWithSecret {
  readonly endpoint: EndpointView;
  readonly secret: string;
}

export interface CreateEndpointInput {
  readonly url: string;
  readonly description?: string | undefined;
  readonly events: readonly string[];
  readonly enabled?: boolean | undefined;
}

export interface UpdateEndpointInput {
  readonly url?: string | undefined;
  /** An empty string removes the description. */
  readonly description?: string | undefined;
  /** Non-empty: replaces the events; empty or absent: unchanged. */
  readonly events?: readonly string[] | undefined;
  readonly enabled?: boolean | undefined;
}

export const MAX_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 500;

export interface WebhookEndpointsOptions {
  readonly store: WebhookEndpointStore;
  readonly sealer: SecretSealer;
  readonly policy: WebhookTargetPolicy;
  readonly clock?: () => Date;
}

/** The context a secret is sealed under: a sealed secret moved to another endpoint does not open. */
export function secretSealContext(companyId: string, endpointId: string): string {
  return `webhook-endpoint:${companyId}:${endpointId}`;
}

export class WebhookEndpoints {
  readonly #store: WebhookEndpointStore;
  readonly #sealer: SecretSealer;
  readonly #policy: WebhookTargetPolicy;
  readonly #clock: () => Date;

  constructor(options: WebhookEndpointsOptions) {
    this.#store = options.store;
    this.#sealer = options.sealer;
    this.#policy = options.policy;
    this.#clock = options.clock ?? (() => new Date());
  }

  async create(companyId: string, input: CreateEndpointInput): Promise<EndpointWithSecret> {
    const problems: FieldProblem[] = [];
    const description = checkDescription(input.description, problems);
    const events = checkEvents(input.events, problems, true);
    const url = checkUrlShape(input.url, problems, true);
    if (problems.length > 0) throw new ValidationError(problems);
    const normalized = await this.#allowedUrl(url as string);

    const id = randomUUID();
    const secret = generateWebhookSecret();
    const record = await this.#store.create(companyId, {
      id,
      url: normalized,
      description: description ?? null,
      events: events as readonly string[],
      enabled: input.enabled ?? true,
      secretSealed: this.#sealer.seal(secret, secretSealContext(companyId, id)),
    });
    return { endpoint: this.#view(record), secret };
  }

  async get(companyId: string, endpointId: string): Promise<EndpointView> {
    return this.#view(await this.#found(companyId, endpointId));
  }

  async list(companyId: string): Promise<EndpointView[]> {
    return (await this.#store.list(companyId)).map((record) => this.#view(record));
  }

  async update(companyId: string, endpointId: string, input: UpdateEndpointInput): Promise<EndpointView> {
    const problems: FieldProblem[] = [];
    const description = checkDescription(input.description, problems);
    const events = input.events && input.events.length > 0 ? checkEvents(input.events, problems, false) : undefined;
    const url = input.url === undefined ? undefined : checkUrlShape(input.url, problems, true);
    if (problems.length > 0) throw new ValidationError(problems);
    await this.#found(companyId, endpointId);

    const changes: { -readonly [K in keyof EndpointChanges]: EndpointChanges[K] } = {};
    if (url !== undefined) changes.url = await this.#allowedUrl(url);
    if (input.description !== undefined) changes.description = description ?? null;
    if (events !== undefined) changes.events = events;
    if (input.enabled !== undefined) changes.enabled = input.enabled;
    const record = await this.#store.update(companyId, endpointId, changes);
    if (!record) throw notFound();
    return this.#view(record);
  }

  async delete(companyId: string, endpointId: string): Promise<void> {
    if (!(await this.#store.delete(companyId, endpointId))) throw notFound();
  }

  /**
   * A new secret; the one it replaces keeps signing for 24 hours. A second
   * rotation within those hours retires the oldest secret at once: at most
   * two secrets ever sign.
   */
  async rotateSecret(companyId: string, endpointId: string): Promise<EndpointWithSecret> {
    const secret = generateWebhookSecret();
    const now = this.#clock();
    const record = await this.#store.rotateSecret(companyId, endpointId, (current) => ({
      secretSealed: this.#sealer.seal(secret, secretSealContext(companyId, current.id)),
      previousSecretSealed: current.secretSealed,
      previousSecretExpiresAt: new Date(now.getTime() + SECRET_ROTATION_OVERLAP_MS),
    }));
    if (!record) throw notFound();
    return { endpoint: this.#view(record), secret };
  }

  /**
   * The secrets that sign a delivery now, newest first: the current one,
   * and the previous one while its overlap lasts.
   */
  signingSecrets(endpoint: EndpointRecord, now: Date): string[] {
    const context = secretSealContext(endpoint.companyId, endpoint.id);
    const secrets = [this.#sealer.unseal(endpoint.secretSealed, context)];
    if (endpoint.previousSecretSealed && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) {
      secrets.push(this.#sealer.unseal(endpoint.previousSecretSealed, context));
    }
    return secrets;
  }

  async #found(companyId: string, endpointId: string): Promise<EndpointRecord> {
    const record = await this.#store.find(companyId, endpointId);
    if (!record) throw notFound();
    return record;
  }

  /** The URL as stored (normalised), or WEBHOOK_HOST_NOT_ALLOWED / VALIDATION_ERROR. */
  async #allowedUrl(url: string): Promise<string> {
    const check = await this.#policy.check(url);
    if (check.allowed) return check.target.url.href;
    switch (check.problem) {
      case "invalid_url":
      case "not_https":
      case "userinfo":
        throw new ValidationError([{ field: "url", problem: check.reason }]);
      case "host_not_allowed":
      case "unresolvable":
        throw new ApiError("WEBHOOK_HOST_NOT_ALLOWED", `The endpoint host is not allowed: ${check.reason}. Use a public https:// address.`);
    }
  }

  #view(record: EndpointRecord): EndpointView {
    const now = this.#clock();
    const overlapping = record.previousSecretExpiresAt !== null && record.previousSecretExpiresAt > now;
    return {
      id: record.id,
      url: record.url,
      description: record.description,
      events: record.events,
      enabled: record.enabled,
      previousSecretExpiresAt: overlapping ? record.previousSecretExpiresAt : null,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
    };
  }
}

function notFound(): ApiError {
  return new ApiError("NOT_FOUND", "No such webhook endpoint.");
}

function checkUrlShape(url: string, problems: FieldProblem[], required: boolean): string | undefined {
  const trimmed = url.trim();
  if (trimmed === "") {
    if (required) problems.push({ field: "url", problem: "is required" });
    return undefined;
  }
  if (trimmed.length > MAX_URL_LENGTH) {
    problems.push({ field: "url", problem: `must be at most ${MAX_URL_LENGTH} characters` });
    return undefined;
  }
  return trimmed;
}

/** Undefined: not given; null: remove (empty string). */
function checkDescription(description: string | undefined, problems: FieldProblem[]): string | null | undefined {
  if (description === undefined) return undefined;
  const trimmed = description.trim();
  if ([...trimmed].length > MAX_DESCRIPTION_LENGTH) {
    problems.push({ field: "description", problem: `must be at most ${MAX_DESCRIPTION_LENGTH} characters` });
  }
  // PostgreSQL text cannot hold U+0000 (the statement would fail).
  if (trimmed.includes("\0")) problems.push({ field: "description", problem: "must not contain NUL characters" });
  return trimmed === "" ? null : trimmed;
}

/** Known names, at least one, duplicates dropped (first occurrence kept). */
function checkEvents(events: readonly string[], problems: FieldProblem[], required: boolean): string[] | undefined {
  if (events.length === 0) {
    if (required) problems.push({ field: "events", problem: "name at least one event" });
    return undefined;
  }
  const unknown = events.filter((name) => !isWebhookEventName(name));
  if (unknown.length > 0) {
    problems.push({ field: "events", problem: `unknown event ${unknown.map((name) => JSON.stringify(name)).join(", ")}` });
    return undefined;
  }
  return [...new Set(events)];
}
