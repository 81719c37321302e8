import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { suppressionKey } from "./normalize.ts";
import type { SuppressionEntry, SuppressionReason, SuppressionsStore } from "./ports.ts";

export const SUPPRESSION_REASONS: readonly SuppressionReason[] = ["bounce", "complaint", "manual"];

export interface SuppressionsServiceOptions {
  readonly store: SuppressionsStore;
}

/** Longest address worth looking at (RFC 5321 path limit); longer input is never suppressed. */
const MAX_EMAIL = 254;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Addresses a company no longer sends to (spec: a hard bounce or a
 * complaint suppresses the address; later sends to it end as `suppressed`).
 * Each method takes the company id first; addresses are matched
 * case-insensitively (see normalize.ts).
 */
export class SuppressionsService {
  readonly #store: SuppressionsStore;

  constructor(options: SuppressionsServiceOptions) {
    this.#store = options.store;
  }

  async isSuppressed(companyId: string, email: string): Promise<boolean> {
    const key = suppressionKey(email);
    if (key === "" || key.length > MAX_EMAIL) return false;
    return this.#store.isListed(companyId, key);
  }

  /**
   * Suppresses the address. Idempotent: an address already on the list
   * keeps its first reason and message. Returns true when this call added it.
   */
  async suppress(companyId: string, email: string, reason: SuppressionReason, messageId?: string): Promise<boolean> {
    if (!SUPPRESSION_REASONS.includes(reason)) {
      throw new ValidationError([{ field: "reason", problem: `must be one of ${SUPPRESSION_REASONS.join(", ")}` }]);
    }
    if (messageId !== undefined && !UUID.test(messageId)) throw new ValidationError([{ field: "messageId", problem: "must be a message id" }]);
    const key = suppressionKey(email);
    if (!key.includes("@") || key.length > MAX_EMAIL) throw new ValidationError([{ field: "email", problem: "must be an email address" }]);
    // Company ids come from our own send path or an operator; one that
    // cannot be an id names no company.
    if (!UUID.test(companyId)) throw new ApiError("NOT_FOUND", "No such company.");
    return this.#store.add(companyId, { email: key, reason, messageId: messageId ?? null });
  }

  /** The company's list, newest first (NOT_FOUND for an unknown company). */
  async list(companyId: string): Promise<SuppressionEntry[]> {
    await this.#requireCompany(companyId);
    return this.#store.list(companyId);
  }

  /** Takes the address off the list; false when it was not on it. */
  async remove(companyId: string, email: string): Promise<boolean> {
    await this.#requireCompany(companyId);
    return this.#store.remove(companyId, suppressionKey(email));
  }

  async #requireCompany(companyId: string): Promise<void> {
    if (!(await this.#store.companyExists(companyId))) throw new ApiError("NOT_FOUND", "No such company.");
  }
}
