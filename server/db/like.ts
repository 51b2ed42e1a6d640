// Text filters match literally (docs/api-contract.md §4.12): Prisma's case-insensitive `equals` and `contains` become
// ILIKE patterns on PostgreSQL, where `%` and `_` are wildcards and `\` escapes them. Values from a query must not act
// as patterns.

/** `text` with LIKE's wildcards (`%`, `_`) and its escape character (`\`) escaped, so it matches only itself. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/** A Prisma string filter matching `text` exactly, case-insensitively, with no wildcard: `industry=%` finds only "%". */
export function equalsInsensitive(text: string) {
  return { equals: escapeLike(text), mode: "insensitive" as const };
}

/** A Prisma string filter matching values that contain `text` literally, case-insensitively. */
export function containsInsensitive(text: string) {
  return { contains: escapeLike(text), mode: "insensitive" as const };
}
