import type { MikroORM } from "@mikro-orm/postgresql";
import { ApiError, ValidationError } from "../../contract/api-error.ts";
import { CompanyRepository } from "../../adapters/postgres/repositories/company-repository.ts";
import { isUuid } from "../../adapters/postgres/repositories/ids.ts";
import {
  SuppressionRepository,
  type SuppressionReason,
  type SuppressionRow,
} from "../../adapters/postgres/repositories/suppression-repository.ts";
import type { Pool } from "../../adapters/postgres/sql.ts";
import { suppressionKey } from "./normalize.ts";

export type SuppressionEntry = SuppressionRow;

export const SUPPRESSION_REASONS: readonly SuppressionReason[] = ["bounce", "complaint", "manual"];

export interface SuppressionsServiceOptions {
  readonly orm: MikroORM;
  readonly pool: () => Promise<Pool>;
}

/** Longest address worth looking at (RFC 5321 path limit); longer input is never suppressed. */
const MAX_EMAIL = 254;

/**
 * Addresses a company no longer sends to (spec: a hard bounce or a
 * complaint suppresses the address; later sends to it end as `suppressed`).
 * Each method takes the company id first; addresses are matched
 * case-insensitively (see normalize.ts).
 */
export class SuppressionsService {
  readonly #options: SuppressionsServiceOptions;
  readonly #repository: SuppressionRepository;

  constructor(options: SuppressionsServiceOptions) {
    this.#options = options;
    this.#repository = new SuppressionRepository(options.pool);
  }

  async isSuppressed(companyId: string, email: string): Promise<boolean> {
    const key = suppressionKey(email);
    if (key === "" || key.length > MAX_EMAIL) return false;
    return this.#repository.existsForCompany(companyId, key);
  }

  /**
   * Suppresses the address. Idempotent: an address already on the list
   * keeps its first reason and message. Returns true when this call added it.
   */
  async suppress(companyId: string, email: string, reason: SuppressionReason, messageId?: string): Promise<boolean> {
    if (!SUPPRESSION_REASONS.includes(reason)) {
      throw new ValidationError([{ field: "reason", problem: `must be one of ${SUPPRESSION_REASONS.join(", ")}` }]);
    }
    if (messageId !== undefined && !isUuid(messageId)) throw new ValidationError([{ field: "messageId", problem: "must be a message id" }]);
    const key = suppressionKey(email);
    if (!key.includes("@") || key.length > MAX_EMAIL) throw new ValidationError([{ field: "email", problem: "must be an email address" }]);
    if (!isUuid(companyId)) throw new ApiError("NOT_FOUND", "No such company.");
    return this.#repository.insertForCompany(companyId, { email: key, reason, messageId: messageId ?? null });
  }

  /** The company's list, newest first (NOT_FOUND for an unknown company). */
  async list(companyId: string): Promise<SuppressionEntry[]> {
    await this.#requireCompany(companyId);
    return this.#repository.listForCompany(companyId);
  }

  /** Takes the address off the list; false when it was not on it. */
  async remove(companyId: string, email: string): Promise<boolean> {
    await this.#requireCompany(companyId);
    return this.#repository.deleteForCompany(companyId, suppressionKey(email));
  }

  async #requireCompany(companyId: string): Promise<void> {
    if (!(await new CompanyRepository(this.#options.orm.em.fork()).findById(companyId))) {
      throw new ApiError("NOT_FOUND", "No such company.");
    }
  }
}
