import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/contract/api-error.ts";
import { createKeysetCursorCodec, type KeysetCursorKind, type KeysetPosition } from "../../../src/capabilities/shared/keyset-cursor.ts";
import { filterFingerprint, KeysetPager, type Page, PAGE_SIZE, type Positioned, UNFILTERED } from "../../../src/capabilities/shared/paging.ts";
import { isUuid } from "../../../src/capabilities/shared/uuid.ts";

/**
 * The paging kit every list shares: the page size rule (1 to 100, default
 * 25) in one wording, the signed keyset cursor and the filters' fingerprint
 * it carries. The lists' own tests (contacts, the audit log, test/hostile)
 * walk real pages; these pin the rules they all inherit.
 */

const COMPANY = "0f8fad5b-d9cb-469f-a165-70867728950e";
const OTHER_COMPANY = "7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f";
const SECRET = "test-cursor-secret";
const KIND: KeysetCursorKind = { context: "mail.v1.test-list.cursor.v1", label: "test list", filters: "status and tag" };

/** The problems a call was refused with, as the caller reads them. */
function refusal(act: () => unknown): string[] {
  try {
    act();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).fields.map((f) => `${f.field}: ${f.problem}`);
  }
  throw new Error("expected a refusal");
}

async function refusalOf(act: () => Promise<unknown>): Promise<string[]> {
  const error = await act().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).fields.map((f) => `${f.field}: ${f.problem}`);
}

/** `count` rows, newest first, each a microsecond apart and all within one millisecond when they can be. */
function rows(count: number): Positioned<string>[] {
  return Array.from({ length: count }, (_, n) => {
    const micros = String(999_999 - n).padStart(6, "0");
    const id = `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
    return { item: `row-${n}`, position: { createdAt: `2025-03-01T12:00:00.${micros}Z`, id } };
  });
}

describe("keyset cursors", () => {
  const codec = createKeysetCursorCodec(SECRET, KIND);
  const fingerprint = filterFingerprint(["sent", "welcome"]);
  const position: KeysetPosition = { createdAt: "2025-03-01T12:00:00.123456Z", id: "0f8fad5b-d9cb-469f-a165-70867728950e" };

  it("hands the position back exactly, to the microsecond, as URL-safe text", () => {
    const cursor = codec.encode(COMPANY, fingerprint, position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(codec.decode(cursor, COMPANY, fingerprint)).toEqual(position);
    // Two rows written in the same millisecond are two different places to resume from.
    const next: KeysetPosition = { ...position, createdAt: "2025-03-01T12:00:00.123457Z" };
    expect(codec.encode(COMPANY, fingerprint, next)).not.toBe(cursor);
    expect(codec.decode(codec.encode(COMPANY, fingerprint, next), COMPANY, fingerprint)).toEqual(next);
  });

  it("tells a caller who changed the filters which ones to send again, and answers another company's cursor like a forged one", () => {
    const cursor = codec.encode(COMPANY, fingerprint, position);
    expect(refusal(() => codec.decode(cursor, COMPANY, filterFingerprint(["sent", "other"])))).toEqual([
      "cursor: was issued for other filters; send the same status and tag as on the first page",
    ]);
    const forged = `${cursor.slice(0, -1)}${cursor.endsWith("A") ? "B" : "A"}`;
    const asForged = refusal(() => codec.decode(forged, COMPANY, fingerprint));
    expect(asForged).toEqual(["cursor: is not a valid cursor; pass nextCursor back unchanged"]);
    // Nothing tells the caller that the cursor is real but someone else's.
    expect(refusal(() => codec.decode(cursor, OTHER_COMPANY, fingerprint))).toEqual(asForged);
  });

  it("refuses an empty string, padding, another alphabet and a token far longer than any cursor", () => {
    const cursor = codec.encode(COMPANY, fingerprint, position);
    const base64 = Buffer.from(cursor, "base64url").toString("base64");
    for (const bad of ["", "A", `${cursor}=`, `${cursor}.`, base64.includes("+") || base64.includes("/") ? base64 : `${base64}+`, "A".repeat(513)]) {
      expect(refusal(() => codec.decode(bad, COMPANY, fingerprint))).toEqual(["cursor: is not a valid cursor; pass nextCursor back unchanged"]);
    }
  });

  it("refuses a position whose shape its list cannot hold, even when correctly signed", () => {
    // A store that lost the microseconds, or an id of another kind, would page wrongly: never resume from one.
    for (const bad of [
      { createdAt: "2025-03-01T12:00:00.123Z", id: position.id },
      { createdAt: "2025-03-01 12:00:00.123456+00", id: position.id },
      { createdAt: position.createdAt, id: "42" },
      { createdAt: position.createdAt, id: position.id.toUpperCase() },
    ]) {
      const signed = codec.encode(COMPANY, fingerprint, bad);
      expect(refusal(() => codec.decode(signed, COMPANY, fingerprint))).toEqual(["cursor: is not a valid cursor; pass nextCursor back unchanged"]);
    }
  });

  it("holds the tie-breaker its list declares: a serial number, or a text key such as an address of up to 320 characters", () => {
    const serial = createKeysetCursorCodec(SECRET, { ...KIND, id: "serial" });
    const big = { createdAt: position.createdAt, id: "9223372036854775807" };
    expect(serial.decode(serial.encode(COMPANY, UNFILTERED, big), COMPANY, UNFILTERED)).toEqual(big);
    for (const id of ["0", "01", "-1", "1.5", "92233720368547758070"]) {
      expect(refusal(() => serial.decode(serial.encode(COMPANY, UNFILTERED, { createdAt: position.createdAt, id }), COMPANY, UNFILTERED))).toHaveLength(1);
    }

    const text = createKeysetCursorCodec(SECRET, { ...KIND, id: "text" });
    // 320 characters of four bytes each: the longest key there is, still a cursor.
    for (const id of ["jürgen.müller@bücher.example", "😀".repeat(320)]) {
      const at = { createdAt: position.createdAt, id };
      expect(text.decode(text.encode(COMPANY, UNFILTERED, at), COMPANY, UNFILTERED)).toEqual(at);
    }
    for (const id of ["", "a".repeat(321), "a\0b"]) {
      expect(refusal(() => text.decode(text.encode(COMPANY, UNFILTERED, { createdAt: position.createdAt, id }), COMPANY, UNFILTERED))).toHaveLength(1);
    }
  });

  it("needs a secret", () => {
    expect(() => createKeysetCursorCodec("", KIND)).toThrow(/test list cursor secret must not be empty/);
  });
});

describe("the filters' fingerprint", () => {
  it("is the same for the same filters, however an absent one or a time was written", () => {
    const since = "2025-03-01T00:00:00.000Z";
    expect(filterFingerprint(["sent", undefined, new Date(since)])).toBe(filterFingerprint(["sent", null, new Date(Date.parse(since))]));
    expect(UNFILTERED).toBe(filterFingerprint([]));
  });

  it("differs when a filter differs, moves, changes type, or two filters could be read as one", () => {
    const seen = new Set(
      [
        filterFingerprint(["a", "b"]),
        filterFingerprint(["b", "a"]),
        filterFingerprint(["a,b"]),
        filterFingerprint(["a", "b", null]),
        filterFingerprint(["1"]),
        filterFingerprint([1]),
        filterFingerprint([true]),
        filterFingerprint(["true"]),
        filterFingerprint([null]),
        filterFingerprint([]),
        filterFingerprint([""]),
        filterFingerprint([new Date("2025-03-01T00:00:00.000Z")]),
        filterFingerprint([new Date("2025-03-01T00:00:00.001Z")]),
      ].map(String),
    );
    expect(seen.size).toBe(13);
  });

  it("keeps search text out of the cursor, at a fixed size", () => {
    const secretSearch = "jane.doe@private.example";
    const short = filterFingerprint([secretSearch]);
    expect(short).not.toContain("jane");
    expect(filterFingerprint(["x".repeat(10_000)])).toHaveLength(short.length);
    const cursor = createKeysetCursorCodec(SECRET, KIND).encode(COMPANY, short, { createdAt: "2025-03-01T12:00:00.000000Z", id: COMPANY });
    expect(Buffer.from(cursor, "base64url").toString("latin1")).not.toContain("jane");
  });
});

describe("KeysetPager: pages of a list", () => {
  const pager = new KeysetPager(SECRET, KIND);
  const fingerprint = filterFingerprint(["sent", null]);

  /** A list of `all` rows read as a store would: after a position, at most `limit` rows; the calls it got. */
  function store(all: readonly Positioned<string>[]) {
    const calls: { after: KeysetPosition | null; limit: number }[] = [];
    const read = async (after: KeysetPosition | null, limit: number) => {
      calls.push({ after, limit });
      const start = after ? all.findIndex((r) => r.position.id === after.id) + 1 : 0;
      return all.slice(start, start + limit);
    };
    return { calls, read };
  }

  it("holds 25 items by default, reading one row more to know whether another page follows", async () => {
    const list = store(rows(26));
    const page = await pager.read(COMPANY, fingerprint, {}, list.read);
    expect(list.calls).toEqual([{ after: null, limit: PAGE_SIZE.default + 1 }]);
    expect(page.items).toHaveLength(25);
    expect(page.nextCursor).not.toBeNull();

    const exactly = await pager.read(COMPANY, fingerprint, {}, store(rows(25)).read);
    expect(exactly.items).toHaveLength(25);
    expect(exactly.nextCursor).toBeNull();
  });

  it("walks the whole list without skipping or repeating a row, resuming after the last item shown", async () => {
    const all = rows(7);
    const list = store(all);
    const seen: string[] = [];
    let cursor: string | undefined = "";
    do {
      const page: Page<string> = await pager.read(COMPANY, fingerprint, { limit: 3, cursor }, list.read);
      seen.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(all.map((r) => r.item));
    expect(list.calls.map((c) => c.after?.id ?? null)).toEqual([null, all[2]?.position.id, all[5]?.position.id]);
    // The page size may change between pages: it is no filter.
    const first = await pager.read(COMPANY, fingerprint, { limit: 2 }, list.read);
    const second = await pager.read(COMPANY, fingerprint, { limit: 100, cursor: first.nextCursor ?? "" }, list.read);
    expect([...first.items, ...second.items]).toEqual(all.map((r) => r.item));
    expect(second.nextCursor).toBeNull();
  });

  it("takes 1 to 100 and refuses any other limit in the one wording, before reading anything", async () => {
    for (const limit of [1, 100]) {
      expect((await pager.read(COMPANY, fingerprint, { limit }, store(rows(101)).read)).items).toHaveLength(limit);
    }
    for (const limit of [0, -1, 101, 2.5, Number.NaN]) {
      const list = store(rows(3));
      expect(await refusalOf(() => pager.read(COMPANY, fingerprint, { limit }, list.read))).toEqual(["limit: must be an integer from 1 to 100"]);
      expect(list.calls).toEqual([]);
    }
  });

  it("refuses the next page's cursor with other filters, for another company, or from another list signed with the same secret", async () => {
    const list = store(rows(5));
    const { nextCursor } = await pager.read(COMPANY, fingerprint, { limit: 2 }, list.read);
    const cursor = nextCursor ?? "";
    await expect(pager.read(COMPANY, filterFingerprint(["bounced", null]), { cursor }, list.read)).rejects.toThrow(/cursor: was issued for other filters/);
    await expect(pager.read(OTHER_COMPANY, fingerprint, { cursor }, list.read)).rejects.toThrow(/cursor: is not a valid cursor/);
    const otherList = new KeysetPager(SECRET, { ...KIND, context: "mail.v1.other-list.cursor.v1" });
    await expect(otherList.read(COMPANY, fingerprint, { cursor }, list.read)).rejects.toThrow(/cursor: is not a valid cursor/);
    expect(list.calls).toHaveLength(1);
  });
});

describe("isUuid", () => {
  it("takes a UUID in any case and nothing else, so a malformed id names no row instead of failing the query", () => {
    expect(isUuid(COMPANY)).toBe(true);
    expect(isUuid(COMPANY.toUpperCase())).toBe(true);
    for (const bad of ["", COMPANY.replaceAll("-", ""), `${COMPANY} `, `{${COMPANY}}`, COMPANY.replace("0", "g"), "1"]) expect(isUuid(bad)).toBe(false);
  });
});
