// Text filters match literally (docs/api-contract.md §4.12): they are ILIKE patterns on PostgreSQL (the record lists'
// SQL, Prisma's case-insensitive `contains`), where `%` and `_` are wildcards and `\` escapes them. Values from a query
// must not act as patterns.

/** `text` with LIKE's wildcards (`%`, `_`) and its escape character (`\`) escaped, so it matches only itself. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/** A Prisma string filter matching values that contain `text` literally, case-insensitively. */
export function containsInsensitive(text: string) {
  return { contains: escapeLike(text), mode: "insensitive" as const };
}
