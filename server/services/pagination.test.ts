import { describe, expect, it } from "vitest";
import { keyset, listCursor, openCursor, parseSort, readListCursor, sealCursor, toPage } from "./pagination";

const fields = { name: { nullable: false }, createdAt: { nullable: false }, employeeCount: { nullable: true } };
const fallback = [{ field: "createdAt", direction: "asc" }] as const;

describe("parseSort (docs/api-contract.md §4.9)", () => {
  it("parses field:direction pairs, directions in any case, and defaults the direction to asc", () => {
    expect(parseSort("name:desc,employeeCount", fields, fallback)).toEqual([
      { field: "name", direction: "desc" },
      { field: "employeeCount", direction: "asc" },
    ]);
    expect(parseSort("name:DESC", fields, fallback)).toEqual([{ field: "name", direction: "desc" }]);
    expect(parseSort(undefined, fields, fallback)).toEqual(fallback);
  });

  it("refuses unknown fields, bad directions, extra parts and repeats with 422 naming the allowed fields", () => {
    for (const raw of ["colour:desc", "NAME:asc", "name:sideways", "name:asc:x", "name,name:desc", "", "__proto__"]) {
      expect(() => parseSort(raw, fields, fallback), raw).toThrow(
        expect.objectContaining({
          code: "validation_error",
          details: [
            { path: ["sort"], message: expect.stringContaining("allowed fields: name, createdAt, employeeCount") },
          ],
        }),
      );
    }
  });
});

describe('cursors (docs/architecture.md, "Cursors")', () => {
  it("round-trips text and numeric ids, compact and opaque", () => {
    const text = listCursor("cm7k2x0a80001northwind0");
    expect(readListCursor(text)).toBe("cm7k2x0a80001northwind0");
    expect(text).not.toContain("northwind");
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    const numeric = listCursor(1042n);
    expect(numeric).toHaveLength(28);
    expect(readListCursor(numeric)).toBe("1042");
    expect(listCursor("x".repeat(64)).length).toBeLessThanOrEqual(128);
  });

  it("refuses what it did not make: another string, a changed character, padding, another context", () => {
    const cursor = listCursor("cm7k2x0a80001northwind0");
    const flipped = `${cursor.slice(0, 5)}${cursor[5] === "A" ? "B" : "A"}${cursor.slice(6)}`;
    for (const forged of ["cm7k2x0a80001northwind0", "", flipped, `${cursor}=`, `${cursor} `, cursor.slice(1)]) {
      expect(() => readListCursor(forged), forged).toThrow(expect.objectContaining({ code: "bad_request" }));
    }
    const feed = sealCursor(3, Buffer.alloc(12), "org-a");
    expect(openCursor(feed, "org-a")?.kind).toBe(3);
    expect(openCursor(feed, "org-b")).toBeNull();
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
  it("cuts limit + 1 rows into a page with hasMore and the last record's cursor as nextCursor", () => {
    const rows = [{ id: "a" }, { id: "b" }, { id: "c" }];
    expect(toPage(rows, 2)).toEqual({ rows: rows.slice(0, 2), hasMore: true, nextCursor: listCursor("b") });
    expect(toPage(rows, 3)).toEqual({ rows, hasMore: false, nextCursor: listCursor("c") });
    expect(toPage([], 3)).toEqual({ rows: [], hasMore: false, nextCursor: null });
  });
});
