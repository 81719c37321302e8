import { createHash } from "node:crypto";
import type { FieldProblem } from "../../contract/api-error.ts";
import { ValidationError } from "../../contract/api-error.ts";
import { createKeysetCursorCodec, type KeysetCursorKind, type KeysetPosition } from "./keyset-cursor.ts";

/**
 * The one paging kit of every list (messages, contacts, audit events,
 * webhook deliveries, members, API keys): the page size rule of the spec
 * (1 to 100, default 25), in one wording; the one signed keyset cursor
 * codec (keyset-cursor.ts); the one fingerprint of a list's filters, which
 * a cursor carries so that it cannot be replayed with other filters.
 */

/** Spec, Pagination rules: `limit` 1 to 100, default 25. */
export const PAGE_SIZE = { default: 25, max: 100 } as const;

/** What a caller asks of a list: how many, from where. */
export interface PageRequest {
  readonly limit?: number | undefined;
  /** The previous page's nextCursor; empty or absent: the first page. */
  readonly cursor?: string | undefined;
}

/** A list page (spec: List page): the items and the cursor of the next page, null when there is none. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor: string | null;
}

/** A row read for a page, with the position the next page starts after. */
export interface Positioned<T> {
  readonly item: T;
  readonly position: KeysetPosition;
}

/** The page size asked for, or its problem in `problems` (the one wording of every list). */
export function pageSize(limit: number | undefined, problems: FieldProblem[]): number {
  const size = limit ?? PAGE_SIZE.default;
  if (!Number.isInteger(size) || size < 1 || size > PAGE_SIZE.max) {
    problems.push({ field: "limit", problem: `must be an integer from 1 to ${PAGE_SIZE.max}` });
  }
  return size;
}

/**
 * A short hash of a list's validated filters (in a fixed order, absent ones
 * as null). Hashed rather than copied: search text stays out of the cursor
 * and the cursor keeps a fixed size. The page size is never part of it:
 * changing it between pages is harmless.
 */
export function filterFingerprint(filters: readonly (string | number | boolean | Date | null | undefined)[]): string {
  const canonical = JSON.stringify(filters.map((value) => (value instanceof Date ? value.toISOString() : (value ?? null))));
  return createHash("sha256").update(canonical).digest().subarray(0, 16).toString("base64url");
}

/** The fingerprint of a list without filters (members, API keys): every cursor carries it. */
export const UNFILTERED = filterFingerprint([]);

/**
 * Keyset pages of one list: decodes where a page starts and makes the next
 * cursor, bound to the company and the filters' fingerprint.
 */
export class KeysetPager {
  readonly #codec: ReturnType<typeof createKeysetCursorCodec>;

  constructor(secret: string, kind: KeysetCursorKind) {
    this.#codec = createKeysetCursorCodec(secret, kind);
  }

  /** Where the page asked for starts: after this position, or at the top (null). */
  after(companyId: string, fingerprint: string, cursor: string | undefined): KeysetPosition | null {
    return cursor ? this.#codec.decode(cursor, companyId, fingerprint) : null;
  }

  /**
   * A page of a list whose filters need no checking of their own (the page
   * size is all): refuses a bad `limit` in the one wording, then reads from
   * where the cursor left off, one row more than the page (`rows(after,
   * limit)` answers at most `limit` rows after `after`, the top when null).
   */
  async read<T>(
    companyId: string,
    fingerprint: string,
    request: PageRequest,
    rows: (after: KeysetPosition | null, limit: number) => Promise<readonly Positioned<T>[]>,
  ): Promise<Page<T>> {
    const problems: FieldProblem[] = [];
    const size = pageSize(request.limit, problems);
    refuseProblems(problems);
    const after = this.after(companyId, fingerprint, request.cursor);
    return this.page(companyId, fingerprint, await rows(after, size + 1), size);
  }

  /**
   * The page from `rows`, read with one row more than `size` asked (the
   * extra row only tells that another page exists).
   */
  page<T>(companyId: string, fingerprint: string, rows: readonly Positioned<T>[], size: number): Page<T> {
    const items = rows.slice(0, size);
    const last = items.at(-1);
    return {
      items: items.map((row) => row.item),
      nextCursor: rows.length > size && last ? this.#codec.encode(companyId, fingerprint, last.position) : null,
    };
  }
}

/** Throws the problems gathered while validating a list request, if any. */
export function refuseProblems(problems: readonly FieldProblem[]): void {
  if (problems.length > 0) throw new ValidationError([...problems]);
}
