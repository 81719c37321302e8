import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { suppressionKey } from "./normalize.ts";
import type { SuppressionEntry, SuppressionReason, SuppressionsStore } from "./ports.ts";
import { isUuid } from "../shared/uuid.ts";

export const SUPPRESSION_REASONS: readonly SuppressionReason[] = ["bounce", "complaint", "manual"];

export interface SuppressionsDependencies {
  readonly store: SuppressionsStore;
}

/** One address of a company's list (any spelling: addresses are matched case-insensitively). */
export interface SuppressionQuery {
  readonly companyId: string;
  readonly email: string;
}

/** Puts an address on the list, with why and (for a bounce or a complaint) the message that showed it. */
export interface SuppressCommand extends SuppressionQuery {
  readonly reason: SuppressionReason;
  readonly messageId?: string | undefined;
}

/** Longest address worth looking at (RFC 5321 path limit); longer input is never suppressed. */
const MAX_EMAIL = 254;

/**
 * The suppression list: addresses a company no longer sends to (spec: a
 * hard bounce or a complaint suppresses the address; later sends to it end
 * as `suppressed`). Addresses are matched case-insensitively (see
 * normalize.ts).
 */
export class Suppressions {
  readonly #store: SuppressionsStore;

  constructor(deps: SuppressionsDependencies) {
    this.#store = deps.store;
  }

  async isSuppressed(query: SuppressionQuery): Promise<boolean> {
    const key = suppressionKey(query.email);
    if (key === "" || key.length > MAX_EMAIL) return false;
    return this.#store.isListed(query.companyId, key);
  }

  /**
   * Suppresses the address. Idempotent: an address already on the list
   * keeps its first reason and message. Returns true when this call added it.
   */
  async suppress(command: SuppressCommand): Promise<boolean> {
    const { companyId, reason, messageId } = command;
    if (!SUPPRESSION_REASONS.includes(reason)) {
      throw new ValidationError([{ field: "reason", problem: `must be one of ${SUPPRESSION_REASONS.join(", ")}` }]);
    }
    if (messageId !== undefined && !isUuid(messageId)) throw new ValidationError([{ field: "messageId", problem: "must be a message id" }]);
    const key = suppressionKey(command.email);
    if (!key.includes("@") || key.length > MAX_EMAIL) throw new ValidationError([{ field: "email", problem: "must be an email address" }]);
    // Company ids come from our own send path or an operator; one that
    // cannot be an id names no company.
    if (!isUuid(companyId)) throw new ApiError("NOT_FOUND", "No such company.");
    return this.#store.add(companyId, { email: key, reason, messageId: messageId ?? null });
  }

  /** The company's list, newest first (NOT_FOUND for an unknown company). */
  async list(query: { readonly companyId: string }): Promise<SuppressionEntry[]> {
    await this.#requireCompany(query.companyId);
    return this.#store.list(query.companyId);
  }

  /** Takes the address off the list; false when it was not on it. */
  async remove(command: SuppressionQuery): Promise<boolean> {
    await this.#requireCompany(command.companyId);
    return this.#store.remove(command.companyId, suppressionKey(command.email));
  }

  async #requireCompany(companyId: string): Promise<void> {
    if (!(await this.#store.companyExists(companyId))) throw new ApiError("NOT_FOUND", "No such company.");
  }
}
