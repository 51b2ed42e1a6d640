import { describe, expect, it } from "vitest";
import { keyset, parseSort, toPage } from "./pagination";

const fields = { name: { nullable: false }, createdAt: { nullable: false }, employeeCount: { nullable: true } };
const fallback = [{ field: "createdAt", direction: "asc" }] as const;

describe("parseSort (docs/api-contract.md §4.9)", () => {
  it("parses field:direction pairs and defaults the direction to asc", () => {
    expect(parseSort("name:desc,employeeCount", fields, fallback)).toEqual([
      { field: "name", direction: "desc" },
      { field: "employeeCount", direction: "asc" },
    ]);
    expect(parseSort("NAME:asc,name:DESC", fields, fallback)).toEqual([{ field: "name", direction: "desc" }]);
  });

  it("silently ignores unknown fields, bad directions and repeats, falling back to the default", () => {
    expect(parseSort("colour:desc", fields, fallback)).toEqual(fallback);
    expect(parseSort("name:sideways,name:asc:x", fields, fallback)).toEqual(fallback);
    expect(parseSort("name,name:desc", fields, fallback)).toEqual([{ field: "name", direction: "asc" }]);
    expect(parseSort(undefined, fields, fallback)).toEqual(fallback);
    expect(parseSort("__proto__:asc", fields, fallback)).toEqual(fallback);
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
  it("cuts limit + 1 rows into a page with hasMore and the last id as nextCursor", () => {
    const rows = [{ id: "a" }, { id: "b" }, { id: "c" }];
    expect(toPage(rows, 2)).toEqual({ rows: rows.slice(0, 2), hasMore: true, nextCursor: "b" });
    expect(toPage(rows, 3)).toEqual({ rows, hasMore: false, nextCursor: "c" });
    expect(toPage([], 3)).toEqual({ rows: [], hasMore: false, nextCursor: null });
  });
});
