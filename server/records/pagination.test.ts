import { describe, expect, it } from "vitest";
import {
  CURSOR_KINDS,
  keyset,
  openCursor,
  parseSort,
  readListCursor,
  type SortHandling,
  sealCursor,
  toPage,
  withSortHandling,
} from "./pagination";

const fields = { name: { nullable: false }, createdAt: { nullable: false }, employeeCount: { nullable: true } };
const fallback = [{ field: "createdAt", direction: "asc" }] as const;
const INVALID = ["colour:desc", "NAME:asc", "name:sideways", "name:asc:x", "", "__proto__"];

describe("parseSort (docs/api-contract.md §4.9)", () => {
  it("parses field:direction pairs, directions in any case, and defaults the direction to asc", () => {
    expect(parseSort("name:desc,employeeCount", fields, fallback)).toEqual([
      { field: "name", direction: "desc" },
      { field: "employeeCount", direction: "asc" },
    ]);
    expect(parseSort("name:DESC", fields, fallback)).toEqual([{ field: "name", direction: "desc" }]);
    expect(parseSort(undefined, fields, fallback)).toEqual(fallback);
  });

  it("under lenient handling ignores each invalid pair, keeps the valid ones, and records what it ignored", () => {
    for (const raw of INVALID) {
      const handling: SortHandling = { strict: false, sorted: false, ignored: [] };
      expect(
        withSortHandling(handling, () => parseSort(raw, fields, fallback)),
        raw,
      ).toEqual(fallback);
      expect(handling, raw).toEqual({ strict: false, sorted: true, ignored: [raw] });
    }
    const handling: SortHandling = { strict: false, sorted: false, ignored: [] };
    expect(
      withSortHandling(handling, () => parseSort(" colour , name:desc,, name:asc ,employeeCount:up", fields, fallback)),
    ).toEqual([{ field: "name", direction: "desc" }]);
    // The first naming of a field counts; the repeat is ignored.
    expect(handling.ignored).toEqual(["colour", "", "name:asc", "employeeCount:up"]);
  });

  it("under strict handling, and outside a request, refuses an invalid pair with 422 naming the allowed fields", () => {
    const refusal = (message: string) =>
      expect.objectContaining({
        code: "validation_error",
        details: [{ path: ["sort"], message: expect.stringContaining(message) }],
      });
    const allowed = "allowed fields: name, createdAt, employeeCount";
    for (const raw of [...INVALID, "name,name:desc"]) {
      const strict: SortHandling = { strict: true, sorted: false, ignored: [] };
      expect(() => withSortHandling(strict, () => parseSort(raw, fields, fallback)), raw).toThrow(refusal(allowed));
      expect(() => parseSort(raw, fields, fallback), raw).toThrow(refusal(allowed));
    }
    expect(() => parseSort("customFields.seats:up", fields, fallback, true)).toThrow(
      refusal(`${allowed}, customFields.<key>`),
    );
  });
});

describe('cursors (docs/architecture.md, "Cursors and sort")', () => {
  it("read a record id as itself, and the signed cursors lists answered before as the id they name", () => {
    expect(readListCursor("cm7k2x0a80001northwind0")).toBe("cm7k2x0a80001northwind0");
    expect(readListCursor("1042")).toBe("1042");
    const text = sealCursor(CURSOR_KINDS.text, Buffer.from("cm7k2x0a80001northwind0"));
    expect(readListCursor(text)).toBe("cm7k2x0a80001northwind0");
    const payload = Buffer.alloc(8);
    payload.writeBigUInt64BE(1042n);
    expect(readListCursor(sealCursor(CURSOR_KINDS.number, payload))).toBe("1042");
  });

  it("refuse what is neither: another form, padding, a feed's or another context's cursor", () => {
    const cursor = sealCursor(CURSOR_KINDS.text, Buffer.from("cm7k2x0a80001northwind0"));
    const feed = sealCursor(CURSOR_KINDS.feed, Buffer.alloc(12));
    for (const forged of ["", `${cursor}=`, `${cursor} `, "x".repeat(65), "a.b", "%2B", feed]) {
      expect(() => readListCursor(forged), forged).toThrow(expect.objectContaining({ code: "bad_request" }));
    }
    const scoped = sealCursor(3, Buffer.alloc(12), "org-a");
    expect(openCursor(scoped, "org-a")?.kind).toBe(3);
    expect(openCursor(scoped, "org-b")).toBeNull();
  });
});

describe("keyset", () => {
  it("orders by the terms plus id, nulls last for nullable fields", () => {
    expect(keyset([{ field: "employeeCount", direction: "desc" }], fields).orderBy).toEqual([
      { employeeCount: { sort: "desc", nulls: "last" } },
      { id: "desc" },
    ]);
  });

  it("seeks strictly after the cursor row with a leading range for the index", () => {
    const at = new Date("2026-01-01T00:00:00Z");
    expect(keyset([{ field: "createdAt", direction: "asc" }], fields, { createdAt: at, id: "c1" }).where).toEqual({
      AND: [
        { createdAt: { gte: at } },
        { OR: [{ AND: [{ createdAt: { gt: at } }] }, { AND: [{ createdAt: at }, { id: { gt: "c1" } }] }] },
      ],
    });
  });

  it("treats a null cursor value as the last group", () => {
    expect(
      keyset([{ field: "employeeCount", direction: "asc" }], fields, { employeeCount: null, id: "c1" }).where,
    ).toEqual({
      OR: [{ AND: [{ employeeCount: null }, { id: { gt: "c1" } }] }],
    });
  });
});

describe("toPage", () => {
  it("cuts limit + 1 rows into a page with hasMore and the last record's id as nextCursor", () => {
    const rows = [{ id: "a" }, { id: "b" }, { id: "c" }];
    expect(toPage(rows, 2)).toEqual({ rows: rows.slice(0, 2), hasMore: true, nextCursor: "b" });
    expect(toPage(rows, 3)).toEqual({ rows, hasMore: false, nextCursor: "c" });
    expect(toPage([{ id: 1042n }], 1).nextCursor).toBe("1042");
    expect(toPage([], 3)).toEqual({ rows: [], hasMore: false, nextCursor: null });
  });
});
