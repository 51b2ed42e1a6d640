// The request's `Prefer: handling=…` (RFC 7240 §4.4) and what the answer says of it (docs/api-contract.md §4.9;
// docs/architecture.md, "Cursors and sort"): lists ignore an invalid `sort` pair unless the request asks for strict
// handling, and name what they ignored in the answer.
import { type SortHandling, withSortHandling } from "../records/pagination";
import type { Step } from "./exchange";

/** Splits `text` on `separator` outside quoted strings (RFC 9110 §5.6.4), keeping the quotes. */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === "\\") i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/**
 * The value of the preference `name` in a `Prefer` header (RFC 7240 §2, with its verified erratum 4439): a
 * comma-separated list of `token[=word]` preferences, each with optional `;` parameters; names compare
 * case-insensitively, a value may be a quoted string, and only the first instance of a preference counts.
 * @returns the value (empty for a preference without one), or undefined when the header does not name it.
 */
function preferenceValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const item of splitOutsideQuotes(header, ",")) {
    const [preference = ""] = splitOutsideQuotes(item, ";");
    const equals = preference.indexOf("=");
    const token = (equals === -1 ? preference : preference.slice(0, equals)).trim().toLowerCase();
    if (token !== name) continue;
    const value = equals === -1 ? "" : preference.slice(equals + 1).trim();
    return /^".*"$/s.test(value) ? value.slice(1, -1).replace(/\\(.)/gs, "$1") : value;
  }
  return undefined;
}

const utf8 = new TextEncoder();

/**
 * One string as a structured field string (RFC 9651 §3.3.3): quoted, `"` and `\` escaped; what a structured string
 * cannot hold (characters outside printable ASCII) and `%` are percent-encoded as UTF-8, as they came in the query.
 */
function structuredString(value: string): string {
  const printable = value.replace(/[^\x20-\x24\x26-\x7e]+/g, (run) =>
    [...utf8.encode(run)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join(""),
  );
  return `"${printable.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/**
 * Preferences (docs/api-contract.md §4.9): runs the rest of the pipeline under the sort handling the request's
 * `Prefer` header asks for, `handling=strict` or else lenient, and says on the answer what was applied. When a list
 * read a `sort` and the request named a handling, or lenient handling ignored a pair, the answer carries
 * `Preference-Applied: handling=strict|lenient`; the ignored pairs, as sent, are `Sort-Ignored`, a structured-field
 * list of strings. A strict refusal carries `Preference-Applied` on its 422 (server/records/pagination.ts).
 */
export const preferences: Step = async (exchange, next) => {
  const asked = preferenceValue(exchange.request.header("prefer"), "handling")?.toLowerCase();
  const handling: SortHandling = { strict: asked === "strict", sorted: false, ignored: [] };
  const reply = await withSortHandling(handling, next);
  const named = asked === "strict" || asked === "lenient";
  if (!handling.sorted || (!named && handling.ignored.length === 0)) return reply;
  const headers: Record<string, string> = {
    ...reply.headers,
    "Preference-Applied": handling.strict ? "handling=strict" : "handling=lenient",
  };
  if (handling.ignored.length > 0) headers["Sort-Ignored"] = handling.ignored.map(structuredString).join(", ");
  return { ...reply, headers };
};
