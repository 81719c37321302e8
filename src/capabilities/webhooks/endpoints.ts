import { randomUUID } from "node:crypto";
import { ApiError, type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import type { AuditContext } from "../audit/types.ts";
import type { SecretSealer } from "../sending-setup/key-sealing.ts";
import { SECRET_ROTATION_OVERLAP_MS } from "./delivery-rules.ts";
import { isWebhookEventName } from "./events.ts";
import type { EndpointAdmission, EndpointChanges, EndpointHealthCounts, EndpointRecord, WebhookEndpointStore } from "./ports.ts";
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
 * - At most `limits.perCompany` endpoints per company and `limits.perHost`
 *   per URL host (one key could otherwise multiply every
 *   event onto one victim URL): 400 VALIDATION_ERROR naming the limit.
 * - A refused host is answered with WEBHOOK_HOST_NOT_ALLOWED and nothing
 *   more (never a resolved address); the detail rides on the error
 *   (HostRefusedError.detail) for the server log only.
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
  /** Deliveries over the last 24 hours. */
  readonly health: EndpointHealth;
}

/** How an endpoint fared since `since` (24 hours before the answer). */
export interface EndpointHealth extends EndpointHealthCounts {
  readonly since: Date;
  /** succeeded / deliveries; null without deliveries. */
  readonly successRate: number | null;
}

/** Port: attempt counts per endpoint since a time (the delivery store). */
export interface EndpointHealthReader {
  healthOf(companyId: string, endpointIds: readonly string[], since: Date): Promise<Map<string, EndpointHealthCounts>>;
}

export const HEALTH_WINDOW_MS = 24 * 60 * 60 * 1000;

/** An endpoint with its secret: only in the answers of create and rotate. */
export interface EndpointWithSecret {
  readonly endpoint: EndpointView;
  readonly secret: string;
}

/** Names one endpoint of the caller's company. */
export interface EndpointCommand {
  readonly companyId: string;
  readonly endpointId: string;
}

/** Names one endpoint to change; `audit` (who acts) writes the change's audit row in its transaction, never the secret. */
export interface ChangeEndpointCommand extends EndpointCommand {
  readonly audit?: AuditContext | undefined;
}

export interface CreateEndpointCommand {
  readonly companyId: string;
  readonly url: string;
  readonly description?: string | undefined;
  readonly events: readonly string[];
  readonly enabled?: boolean | undefined;
  readonly audit?: AuditContext | undefined;
}

export interface UpdateEndpointCommand extends ChangeEndpointCommand {
  readonly url?: string | undefined;
  /** An empty string removes the description. */
  readonly description?: string | undefined;
  /** Non-empty: replaces the events; empty or absent: unchanged. */
  readonly events?: readonly string[] | undefined;
  readonly enabled?: boolean | undefined;
}

/** Bounds on a company's endpoints (config WEBHOOK_ENDPOINTS_PER_COMPANY, WEBHOOK_ENDPOINTS_PER_HOST). */
export interface EndpointLimits {
  readonly perCompany: number;
  readonly perHost: number;
}

export const DEFAULT_ENDPOINT_LIMITS: EndpointLimits = { perCompany: 20, perHost: 3 };

/** The one public wording of a refused host: no address, no reason. */
export const HOST_NOT_ALLOWED_MESSAGE = "The endpoint host is not allowed. Use a public https:// address.";

/**
 * WEBHOOK_HOST_NOT_ALLOWED with the reason kept apart: `detail` (which
 * address, which range, a DNS failure) is for the server log under the
 * request id, never for the answer.
 */
export class HostRefusedError extends ApiError {
  readonly detail: string;
  constructor(detail: string) {
    super("WEBHOOK_HOST_NOT_ALLOWED", HOST_NOT_ALLOWED_MESSAGE);
    this.detail = detail;
  }
}

export const MAX_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 500;

export interface WebhookEndpointsDependencies {
  readonly store: WebhookEndpointStore;
  readonly sealer: SecretSealer;
  readonly policy: WebhookTargetPolicy;
  readonly limits?: EndpointLimits;
  /** Endpoint health; without it every endpoint shows no deliveries. */
  readonly health?: EndpointHealthReader;
  readonly clock?: () => Date;
}

/** The context a secret is sealed under: a sealed secret moved to another endpoint does not open. */
export function secretSealContext(companyId: string, endpointId: string): string {
  return `webhook-endpoint:${companyId}:${endpointId}`;
}

/**
 * The secrets that sign a request to `endpoint` at `now`, newest first: the
 * current one, and the previous one while its overlap lasts.
 */
export function signingSecrets(sealer: SecretSealer, endpoint: EndpointRecord, now: Date): string[] {
  const context = secretSealContext(endpoint.companyId, endpoint.id);
  const secrets = [sealer.unseal(endpoint.secretSealed, context)];
  if (endpoint.previousSecretSealed && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) {
    secrets.push(sealer.unseal(endpoint.previousSecretSealed, context));
  }
  return secrets;
}

export class WebhookEndpoints {
  readonly #store: WebhookEndpointStore;
  readonly #sealer: SecretSealer;
  readonly #policy: WebhookTargetPolicy;
  readonly #limits: EndpointLimits;
  readonly #health: EndpointHealthReader | undefined;
  readonly #clock: () => Date;

  constructor(options: WebhookEndpointsDependencies) {
    this.#store = options.store;
    this.#sealer = options.sealer;
    this.#policy = options.policy;
    this.#limits = options.limits ?? DEFAULT_ENDPOINT_LIMITS;
    this.#health = options.health;
    this.#clock = options.clock ?? (() => new Date());
  }

  async create(command: CreateEndpointCommand): Promise<EndpointWithSecret> {
    const { companyId, audit } = command;
    const problems: FieldProblem[] = [];
    const description = checkDescription(command.description, problems);
    const events = checkEvents(command.events, problems, true);
    const url = checkUrlShape(command.url, problems, true);
    if (problems.length > 0) throw new ValidationError(problems);
    const normalized = await this.#allowedUrl(url as string);

    const id = randomUUID();
    const secret = generateWebhookSecret();
    const draft = {
      id,
      url: normalized,
      description: description ?? null,
      events: events as readonly string[],
      enabled: command.enabled ?? true,
      secretSealed: this.#sealer.seal(secret, secretSealContext(companyId, id)),
    };
    const note = audit && { context: audit, action: "webhook.created" as const, details: { url: normalized, events: draft.events } };
    const record = await this.#store.create(companyId, draft, withinLimits(this.#limits, normalized, true), note);
    return { endpoint: await this.#view(companyId, record), secret };
  }

  async get(command: EndpointCommand): Promise<EndpointView> {
    return this.#view(command.companyId, await this.#found(command));
  }

  async list(command: { readonly companyId: string }): Promise<EndpointView[]> {
    return this.#views(command.companyId, await this.#store.list(command.companyId));
  }

  async update(command: UpdateEndpointCommand): Promise<EndpointView> {
    const { companyId, endpointId, audit } = command;
    const problems: FieldProblem[] = [];
    const description = checkDescription(command.description, problems);
    const events = command.events && command.events.length > 0 ? checkEvents(command.events, problems, false) : undefined;
    const url = command.url === undefined ? undefined : checkUrlShape(command.url, problems, true);
    if (problems.length > 0) throw new ValidationError(problems);
    await this.#found(command);

    const changes: { -readonly [K in keyof EndpointChanges]: EndpointChanges[K] } = {};
    if (url !== undefined) changes.url = await this.#allowedUrl(url);
    if (command.description !== undefined) changes.description = description ?? null;
    if (events !== undefined) changes.events = events;
    if (command.enabled !== undefined) changes.enabled = command.enabled;
    const admit = changes.url !== undefined ? withinLimits(this.#limits, changes.url, false) : undefined;
    const details: Record<string, string | boolean | null | readonly string[]> = {};
    if (changes.url !== undefined) details.url = changes.url;
    if (changes.events !== undefined) details.events = changes.events;
    if (changes.enabled !== undefined) details.enabled = changes.enabled;
    if (changes.description !== undefined) details.description = changes.description;
    const note = audit && { context: audit, action: "webhook.updated" as const, details };
    const record = await this.#store.update(companyId, endpointId, changes, admit, note);
    if (!record) throw endpointNotFound();
    return this.#view(companyId, record);
  }

  async delete(command: ChangeEndpointCommand): Promise<void> {
    const note = command.audit && { context: command.audit, action: "webhook.deleted" as const, details: {} };
    if (!(await this.#store.delete(command.companyId, command.endpointId, note))) throw endpointNotFound();
  }

  /**
   * A new secret; the one it replaces keeps signing for 24 hours. A second
   * rotation within those hours retires the oldest secret at once: at most
   * two secrets ever sign.
   */
  async rotateSecret(command: ChangeEndpointCommand): Promise<EndpointWithSecret> {
    const { companyId, endpointId, audit } = command;
    const secret = generateWebhookSecret();
    const now = this.#clock();
    const record = await this.#store.rotateSecret(companyId, endpointId, (current) => ({
      secretSealed: this.#sealer.seal(secret, secretSealContext(companyId, current.id)),
      previousSecretSealed: current.secretSealed,
      previousSecretExpiresAt: new Date(now.getTime() + SECRET_ROTATION_OVERLAP_MS),
    }), audit && { context: audit, action: "webhook.secret_rotated", details: {} });
    if (!record) throw endpointNotFound();
    return { endpoint: await this.#view(companyId, record), secret };
  }

  async #found(command: EndpointCommand): Promise<EndpointRecord> {
    const record = await this.#store.find(command.companyId, command.endpointId);
    if (!record) throw endpointNotFound();
    return record;
  }

  /**
   * The URL as stored (normalised), or VALIDATION_ERROR for its shape, or
   * WEBHOOK_HOST_NOT_ALLOWED (HostRefusedError) for its host: not public,
   * not resolving, or not resolving within the resolver's deadline.
   */
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
      case "resolve_timeout":
        throw new HostRefusedError(`${check.problem}: ${check.reason}`);
    }
  }

  async #view(companyId: string, record: EndpointRecord): Promise<EndpointView> {
    return (await this.#views(companyId, [record]))[0] as EndpointView;
  }

  async #views(companyId: string, records: readonly EndpointRecord[]): Promise<EndpointView[]> {
    const now = this.#clock();
    const since = new Date(now.getTime() - HEALTH_WINDOW_MS);
    const counts =
      this.#health && records.length > 0
        ? await this.#health.healthOf(companyId, records.map((r) => r.id), since)
        : new Map<string, EndpointHealthCounts>();
    return records.map((record) => this.#plainView(record, now, healthFrom(since, counts.get(record.id))));
  }

  #plainView(record: EndpointRecord, now: Date, health: EndpointHealth): EndpointView {
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
      health,
    };
  }
}

function healthFrom(since: Date, counts: EndpointHealthCounts | undefined): EndpointHealth {
  const c = counts ?? { deliveries: 0, succeeded: 0, attempts: 0, failedAttempts: 0 };
  return { since, ...c, successRate: c.deliveries > 0 ? c.succeeded / c.deliveries : null };
}

/** The host a stored (normalised) URL counts under. */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return url;
  }
}

/** The admission of a new endpoint (`adding`) or of a URL change, against the company's other endpoints. */
function withinLimits(limits: EndpointLimits, url: string, adding: boolean): EndpointAdmission {
  return (others) => {
    if (adding && others.length >= limits.perCompany) {
      throw new ValidationError([
        { field: "url", problem: `a company may have at most ${limits.perCompany} webhook endpoints; delete one before adding another` },
      ]);
    }
    const host = hostOf(url);
    const sameHost = others.filter((other) => hostOf(other.url) === host).length;
    if (sameHost >= limits.perHost) {
      throw new ValidationError([
        { field: "url", problem: `a company may have at most ${limits.perHost} webhook endpoints with the same host (${host})` },
      ]);
    }
  };
}

/** The one answer for an endpoint the caller's company does not have. */
export function endpointNotFound(): ApiError {
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

/** Known names, at least one when `required`, duplicates dropped (first occurrence kept); problems name `events`. */
export function checkEvents(events: readonly string[], problems: FieldProblem[], required: boolean): string[] | undefined {
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
