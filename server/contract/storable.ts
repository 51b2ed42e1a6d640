import type { ErrorDetail } from "../errors";

// A NUL character, or a UTF-16 surrogate without its partner: PostgreSQL's text and jsonb cannot hold either.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the NUL character is exactly what this must find.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, "g");

/** `text` with each NUL character and lone surrogate replaced by U+FFFD, for logs that must store what came. */
export function replaceUnstorableText(text: string): string {
  return text.replace(UNSTORABLE_ALL, "\ufffd");
}

function describe(text: string): string {
  return text.includes("\u0000")
    ? "must not contain the NUL character (U+0000)"
    : "must not contain a lone UTF-16 surrogate (U+D800–U+DFFF without its pair)";
}

/**
 * Finds text PostgreSQL cannot store (docs/api-contract.md §4.12): a NUL character (U+0000) or a lone UTF-16 surrogate,
 * in any string or object key of a parsed JSON value or query, at any depth.
 * @param path where `value` sits (array of strings, as in docs/api-contract.md §2.1 `details`).
 * @returns the first offending place as a validation detail (`{path, message}`), or null when everything is storable.
 */
export function findUnstorableText(value: unknown, path: string[] = []): ErrorDetail | null {
  if (typeof value === "string") return UNSTORABLE.test(value) ? { path, message: describe(value) } : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i], [...path, String(i)]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (UNSTORABLE.test(key)) return { path: [...path, key], message: `field name ${describe(key)}` };
      const found = findUnstorableText(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}
