import type { PrincipalActor } from "../accounts/principal.ts";
import type { AuditContext } from "../audit/types.ts";
import { ApiError, type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import type { KeysetCursorKind } from "../shared/keyset-cursor.ts";
import { filterFingerprint, KeysetPager, type Page, type PageRequest, pageSize, refuseProblems } from "../shared/paging.ts";
import { isUuid } from "../shared/uuid.ts";
import { suppressionKey } from "./normalize.ts";
import type { SuppressionEntry, SuppressionFilters, SuppressionReason, SuppressionsStore } from "./ports.ts";

export const SUPPRESSION_REASONS: readonly SuppressionReason[] = ["bounce", "complaint", "manual"];

export interface SuppressionsDependencies {
  readonly store: SuppressionsStore;
  /** Secret of the list's cursors. */
  readonly cursorSecret: string;
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

/** A page of the list, with its filters. */
export interface ListSuppressionsCommand extends PageRequest {
  readonly companyId: string;
  /** Part of the address, case-insensitive. */
  readonly q?: string | undefined;
  readonly reason?: SuppressionReason | undefined;
  /** Suppressed at or after. */
  readonly since?: Date | undefined;
  /** Suppressed before. */
  readonly until?: Date | undefined;
}

/** A Mail administrator (or an operator) suppresses an address by hand. */
export interface AddSuppressionCommand extends SuppressionQuery {
  readonly audit: AuditContext;
}

export interface AddSuppressionResult {
  readonly suppression: SuppressionEntry;
  /** False when the address was listed already (its entry is answered as it is). */
  readonly created: boolean;
}

/** Takes an address off the list, saying why. */
export interface RemoveSuppressionCommand extends SuppressionQuery {
  /** Why the address may be mailed again (kept in the audit log). */
  readonly reason: string;
  /** Who removes it: the owner role (an owner's session, an operator) may clear a complaint. */
  readonly actor: PrincipalActor;
  readonly audit: AuditContext;
}

/** Longest address worth looking at (RFC 5321 path limit); longer input is never suppressed. */
const MAX_EMAIL = 254;
const MAX_REMOVAL_REASON = 500;

/** The list's cursors: positions are (created_at, address). */
export const SUPPRESSION_CURSOR: KeysetCursorKind = {
  context: "mail.v1.suppressions.cursor.v1",
  label: "suppression list",
  filters: "q, reason, since and until",
  id: "text",
};

/**
 * The suppression list: addresses a company no longer sends to (spec: a
 * hard bounce or a complaint suppresses the address; later sends to it end
 * as `suppressed`). Addresses are matched case-insensitively (see
 * normalize.ts). The send path reads and fills it (isSuppressed, suppress);
 * the company reads it, adds to it and removes from it (list, get, add,
 * remove), each change audited.
 */
export class Suppressions {
  readonly #store: SuppressionsStore;
  readonly #pager: KeysetPager;

  constructor(deps: SuppressionsDependencies) {
    this.#store = deps.store;
    this.#pager = new KeysetPager(deps.cursorSecret, SUPPRESSION_CURSOR);
  }

  async isSuppressed(query: SuppressionQuery): Promise<boolean> {
    const key = suppressionKey(query.email);
    if (key === "" || key.length > MAX_EMAIL) return false;
    return this.#store.isListed(query.companyId, key);
  }

  /**
   * Suppresses the address after a bounce or a complaint (the send path).
   * Idempotent: an address already on the list keeps its first reason and
   * message. Returns true when this call added it.
   */
  async suppress(command: SuppressCommand): Promise<boolean> {
    const { companyId, reason, messageId } = command;
    if (!SUPPRESSION_REASONS.includes(reason)) {
      throw new ValidationError([{ field: "reason", problem: `must be one of ${SUPPRESSION_REASONS.join(", ")}` }]);
    }
    if (messageId !== undefined && !isUuid(messageId)) throw new ValidationError([{ field: "messageId", problem: "must be a message id" }]);
    const key = validAddress(command.email);
    // Company ids come from our own send path; one that cannot be an id names no company.
    if (!isUuid(companyId)) throw new ApiError("NOT_FOUND", "No such company.");
    return this.#store.add(companyId, { email: key, reason, messageId: messageId ?? null });
  }

  /** The company's list, newest first, filtered, one page at a time. */
  async list(command: ListSuppressionsCommand): Promise<Page<SuppressionEntry>> {
    const { companyId } = command;
    const { size, filters } = checkListQuery(command);
    const fingerprint = filterFingerprint([filters.q, filters.reason, filters.since, filters.until]);
    const after = this.#pager.after(companyId, fingerprint, command.cursor);
    return this.#pager.page(companyId, fingerprint, await this.#store.list(companyId, filters, after, size + 1), size);
  }

  /** One address's entry; NOT_FOUND when it is not listed. */
  async get(query: SuppressionQuery): Promise<SuppressionEntry> {
    const entry = await this.#store.find(query.companyId, lookupKey(query.email));
    if (!entry) throw notListed();
    return entry;
  }

  /** Suppresses an address by hand (reason `manual`); an address already listed is answered as it is. */
  async add(command: AddSuppressionCommand): Promise<AddSuppressionResult> {
    const email = validAddress(command.email);
    const audit = { context: command.audit, action: "suppression.added" as const, details: { email, reason: "manual" } };
    const { entry, created } = await this.#store.addAudited(command.companyId, { email, reason: "manual", messageId: null }, audit);
    return { suppression: entry, created };
  }

  /**
   * Takes an address off the list with a written reason. A complaint is
   * cleared only by the owner role: the recipient said they want no mail.
   * Answers the entry as it was.
   */
  async remove(command: RemoveSuppressionCommand): Promise<SuppressionEntry> {
    const why = command.reason.trim();
    const problems: FieldProblem[] = [];
    if (why === "") problems.push({ field: "reason", problem: "must say why the address may be mailed again (it is kept in the audit log)" });
    if ([...why].length > MAX_REMOVAL_REASON) problems.push({ field: "reason", problem: `must be at most ${MAX_REMOVAL_REASON} characters` });
    refuseProblems(problems);
    const removed = await this.#store.remove(command.companyId, lookupKey(command.email), (entry) => {
      if (entry.reason === "complaint" && !holdsOwnerRole(command.actor)) {
        throw new ApiError(
          "FORBIDDEN",
          "Only an owner may remove a complaint: the recipient reported your mail as spam. Ask an owner of your company to remove it.",
        );
      }
      return { context: command.audit, action: "suppression.removed", details: { email: entry.email, suppressedFor: entry.reason, reason: why } };
    });
    if (!removed) throw notListed();
    return removed;
  }
}

/** An owner's session, or an operator acting for the company. */
function holdsOwnerRole(actor: PrincipalActor): boolean {
  return actor.kind === "operator" || (actor.kind === "member" && actor.role === "owner");
}

/** The stored spelling of an address to suppress, or a VALIDATION_ERROR naming `email`. */
function validAddress(email: string): string {
  const key = suppressionKey(email);
  if (!key.includes("@") || key.length > MAX_EMAIL || key.includes("\0")) throw new ValidationError([{ field: "email", problem: "must be an email address" }]);
  return key;
}

/** The stored spelling of an address to look up; one that cannot be listed is NOT_FOUND. */
function lookupKey(email: string): string {
  const key = suppressionKey(email);
  if (key === "" || key.length > MAX_EMAIL || key.includes("\0")) throw notListed();
  return key;
}

function notListed(): ApiError {
  return new ApiError("NOT_FOUND", "The address is not on the suppression list.");
}

/** The rules of a list query, without I/O: its page size and filters, or one ValidationError naming every bad field. */
function checkListQuery(query: ListSuppressionsCommand): { size: number; filters: SuppressionFilters } {
  const problems: FieldProblem[] = [];
  const size = pageSize(query.limit, problems);
  const q = query.q?.trim().toLowerCase() || undefined;
  if (q !== undefined && [...q].length > MAX_EMAIL) problems.push({ field: "q", problem: `must be at most ${MAX_EMAIL} characters` });
  if (q?.includes("\0")) problems.push({ field: "q", problem: "must not contain NUL characters" });
  if (query.reason !== undefined && !SUPPRESSION_REASONS.includes(query.reason)) {
    problems.push({ field: "reason", problem: `must be one of ${SUPPRESSION_REASONS.join(", ")}` });
  }
  if (query.since && query.until && query.until <= query.since) problems.push({ field: "until", problem: "must be after since" });
  refuseProblems(problems);
  return { size, filters: { q, reason: query.reason, since: query.since, until: query.until } };
}
