import { type ZodError, z } from "zod";
import type { ErrorDetail } from "../errors";

/**
 * An external key in Unicode Normalization Form C (docs/architecture.md, "Data and migrations"): `café` typed as one
 * code point or as `e` plus a combining accent is one key. Applied to the external keys `externalId` and `rmmAgentId`
 * wherever they enter, in writes, bulk items and filters, with zod's `overwrite`, so the stored and compared value is
 * the normalised one and the OpenAPI document still shows a plain string. (Emails are checked to be ASCII, which NFC
 * leaves as it is.)
 */
export function toNfc(value: string): string {
  return value.normalize("NFC");
}

/** Default and maximum page sizes (docs/api-contract.md §4.9, §8). */
export const PAGE_SIZE = { default: 50, max: 100 } as const;

/**
 * A record identifier in a path (docs/api-contract.md §2.2); a malformed one is answered 400 `bad_request`
 * (docs/api-contract.md §7).
 */
export const IdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, "must be a record identifier")
  .describe("Record identifier (opaque string, cuid style).")
  .meta({ example: "cm7k2x0a80001northwind0" });

/**
 * Longest ISO 8601 timestamp accepted or returned, in characters: nanoseconds and a ±hh:mm offset take 35
 * (`2026-11-24T09:00:00.123456789+05:30`); responses always use the 24 of `2026-11-24T09:00:00.123Z`
 * (docs/api-contract.md §2.2).
 */
export const DATE_TIME_MAX_LENGTH = 40;

/** ISO 8601 UTC timestamp with milliseconds, as every timestamp in responses (docs/api-contract.md §2.2). */
export const TimestampSchema = z.iso
  .datetime()
  .max(DATE_TIME_MAX_LENGTH)
  .describe("ISO 8601 UTC timestamp with milliseconds.");

/**
 * The instants a request may give (docs/api-contract.md §2.2): years 0001 to 9999, in UTC once its offset is applied,
 * so every stored time reads back as a 4-digit year and PostgreSQL accepts every compared one (it refuses year 0000
 * and offsets past ±15:59; JavaScript writes years past 9999 as `+010000`).
 */
export const INSTANT_RANGE = { min: "0001-01-01T00:00:00.000Z", max: "9999-12-31T23:59:59.999Z" } as const;

/** Largest UTC offset a request's time may carry, in minutes: ±14:00, the widest any time zone uses. */
const UTC_OFFSET_MAX_MINUTES = 14 * 60;

const INSTANT_MIN_MS = Date.parse(INSTANT_RANGE.min);
const INSTANT_MAX_MS = Date.parse(INSTANT_RANGE.max);

/** What a refused date or time is told, naming the bounds (docs/api-contract.md §2.2). */
const DATE_RANGE_MESSAGES = {
  year: "must be in the years 0001 to 9999",
  offset: "must have a UTC offset within ±14:00",
  instant: `must be an instant from ${INSTANT_RANGE.min} to ${INSTANT_RANGE.max} (years 0001 to 9999 in UTC)`,
} as const;

/**
 * The bounds every time in a request keeps (docs/api-contract.md §2.2), on text the ISO 8601 format already admits:
 * a year from 0001, an offset within ±14:00, and an instant in UTC within {@link INSTANT_RANGE} (a fraction of a
 * millisecond past the last one counts: PostgreSQL would round it up into year 10000).
 */
function checkInstant(value: string, ctx: z.core.$RefinementCtx<string>): void {
  // Text the format refuses has its issue already.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/.test(value)) return;
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(value);
  const at = Date.parse(value);
  const fraction = /T[^.]*\.(\d+)/.exec(value)?.[1] ?? "";
  const pastLast = at === INSTANT_MAX_MS && /[1-9]/.test(fraction.slice(3));
  // One issue a value: the first bound it breaks.
  const message = value.startsWith("0000-")
    ? DATE_RANGE_MESSAGES.year
    : offset && Number(offset[2]) * 60 + Number(offset[3]) > UTC_OFFSET_MAX_MINUTES
      ? DATE_RANGE_MESSAGES.offset
      : at < INSTANT_MIN_MS || at > INSTANT_MAX_MS || pastLast
        ? DATE_RANGE_MESSAGES.instant
        : undefined;
  if (message) ctx.addIssue({ code: "custom", message });
}

/**
 * A time in a request, the one schema of every date-time input (query, body, filter value, custom field value):
 * ISO 8601 with a time zone, `Z` or `±hh:mm` (docs/api-contract.md §2.2), at most {@link DATE_TIME_MAX_LENGTH}
 * characters, within the years 0001–9999 and offsets within ±14:00 ({@link DATE_RANGE_MESSAGES}); anything else is
 * 422 `validation_error` naming the field. Callers add their description.
 */
export const DateTimeInputSchema = z.iso.datetime({ offset: true }).max(DATE_TIME_MAX_LENGTH).superRefine(checkInstant);

/** {@link DateTimeInputSchema} in UTC only (`Z`), for the inputs documented as UTC (`GET /usage`'s range). */
export const UtcDateTimeInputSchema = z.iso.datetime().max(DATE_TIME_MAX_LENGTH).superRefine(checkInstant);

/**
 * A calendar date, `YYYY-MM-DD`, such as a deal's expected close date (docs/api-contract.md §2.5), in the years 0001
 * to 9999 (PostgreSQL has no year 0000: 422 naming the field). Its pattern admits exactly 10 characters, which the
 * document states as `maxLength` (a second check would only repeat the format's issue).
 */
export const DateSchema = z.iso
  .date()
  .refine((value) => !value.startsWith("0000-"), DATE_RANGE_MESSAGES.year)
  .meta({ maxLength: 10 });

/**
 * A boolean query parameter (docs/api-contract.md §4.12): `true` or `false` in the query string, documented as a
 * boolean so that typed clients pass `true`, not the text `"true"`. The facade turns exactly the texts `true` and
 * `false` into booleans before validation (server/http/input.ts); any other text reaches this schema as a string and
 * is 422 `validation_error` naming the parameter.
 */
export const BooleanQuerySchema = z.boolean({ error: "expected true or false" }).describe("`true` or `false`.");

/**
 * Longest cursor the service makes or reads, in characters (docs/api-contract.md §4.9.1): a list's is a record id of
 * at most 64 characters (a signed one, as lists answered before, 103), the events feed's a position (34).
 */
export const CURSOR_MAX_LENGTH = 128;

/**
 * The `cursor` query parameter of a list or of the events feed (docs/api-contract.md §4.9.1). Its bound is documented
 * but not checked here: the list refuses every string that is neither a record id nor a cursor it made, whatever its
 * length or characters, with the same 400 `bad_request`, so a cursor is never 422.
 */
export function cursorParam(description: string) {
  return z.string().describe(description).meta({ maxLength: CURSOR_MAX_LENGTH }).optional();
}

/** The `nextCursor` of a list page (docs/api-contract.md §2.1, §4.9.1): the id of the page's last record. */
export const NextCursorSchema = z
  .string()
  .max(CURSOR_MAX_LENGTH)
  .nullable()
  .describe(
    "The identifier of the last record of the page (for health scores its accountId): pass it as cursor to continue after that record. Present on the last page too (null only on an empty page), so a later request continues with records added since.",
  );

/**
 * Query parameters shared by every list endpoint (docs/api-contract.md §4.9): `limit` (1–100, default 50), `cursor`
 * (the `nextCursor` of the previous page: a record id), `updatedAfter` (ISO 8601; only records whose `updatedAt` is strictly later),
 * `sort`.
 */
export const ListQueryBase = {
  limit: z
    .int()
    .min(1)
    .max(PAGE_SIZE.max)
    .default(PAGE_SIZE.default)
    .describe(`Page size, 1 to ${PAGE_SIZE.max}; default ${PAGE_SIZE.default}. Larger values are refused (422).`),
  cursor: cursorParam(
    "The nextCursor of the previous page: the id of a record of this list, after which the page continues in the list's order (a signed cursor answered before works too). Anything else, or the id of a record this list does not have (deleted, or another organisation's), gives 400 bad_request: start again from the first page.",
  ),
  updatedAfter: DateTimeInputSchema.describe(
    "ISO 8601 timestamp with a time zone (Z or ±hh:mm); only records with updatedAt strictly after it.",
  )
    .meta({ example: "2026-11-20T00:00:00Z" })
    .optional(),
};

/** One term of an ORDER BY: field and direction. */
export interface SortTerm {
  field: string;
  direction: "asc" | "desc";
}

/** A field naming a custom field, `customFields.<key>`, in a sort (docs/api-contract.md §4.9.5) or a structured search. */
export const CUSTOM_FIELD_PATH = /^customFields\.[a-z][a-z0-9_]{0,39}$/;

/** A pair of `sort` that names no way to sort the list, and why (docs/api-contract.md §4.9). */
export interface InvalidSortPair {
  /** The pair as sent, trimmed (`colour:desc`; empty for an empty value or pair). */
  pair: string;
  /** Why it is invalid, naming the allowed fields. */
  reason: string;
}

/**
 * Parses `sort` (`field:direction` pairs, comma-separated; direction `asc` or `desc` in any case, default `asc`)
 * against an allow-list (docs/api-contract.md §4.9). A pair is invalid when it is empty, names a field outside the
 * allow-list, is not `field`, `field:asc` or `field:desc`, or repeats a field named before it (the first one counts).
 * @param customFields whether the list also sorts by `customFields.<key>` (docs/api-contract.md §4.9.5), for the
 *   reasons' list of allowed fields; the keys themselves are in `allowed` when the organisation's fields were read.
 * @returns the valid terms in order, and each invalid pair with why, naming the allowed fields.
 */
export function parseSortParam(
  raw: string,
  allowed: readonly string[],
  customFields = false,
): { terms: SortTerm[]; invalid: InvalidSortPair[] } {
  const terms: SortTerm[] = [];
  const invalid: InvalidSortPair[] = [];
  const fixed = customFields ? allowed.filter((field) => !CUSTOM_FIELD_PATH.test(field)) : allowed;
  const custom = customFields ? ", customFields.<key>" : "";
  const expected = `allowed fields: ${fixed.join(", ")}${custom}, each as field, field:asc or field:desc`;
  for (const part of raw.split(",")) {
    const pair = part.trim();
    const parts = pair.split(":");
    const [field = "", direction = "asc"] = parts;
    const dir = direction.toLowerCase();
    let reason: string | undefined;
    if (pair === "") reason = `an empty sort pair sorts by nothing; ${expected}`;
    else if (!allowed.includes(field))
      reason = `${JSON.stringify(field)} is not a sort field of this list; ${expected}`;
    else if (parts.length > 2 || (dir !== "asc" && dir !== "desc"))
      reason = `${JSON.stringify(pair)} is not field:asc or field:desc; ${expected}`;
    else if (terms.some((term) => term.field === field)) reason = `${field} appears twice; ${expected}`;
    if (reason === undefined) terms.push({ field, direction: dir as SortTerm["direction"] });
    else invalid.push({ pair, reason });
  }
  return { terms, invalid };
}

/** Longest `sort` value, in characters (docs/api-contract.md §4.9): a longer one is 422 whatever the handling. */
export const SORT_MAX_LENGTH = 200;

/**
 * A `sort` query parameter documenting its allow-list (docs/api-contract.md §4.9). The schema bounds its length only:
 * the list reads the pairs against its allow-list (and the organisation's custom fields, docs/api-contract.md §4.9.5),
 * ignoring invalid ones, or answering them 422 `validation_error` naming the allowed fields when the request sends
 * `Prefer: handling=strict` (server/records/pagination.ts, `parseSort`).
 */
export function sortParam(fields: readonly string[], fallback: string, customFields = false) {
  const custom = customFields
    ? ", and customFields.<key> of a custom field of any type but multiSelect (values missing sort last)"
    : "";
  return z
    .string()
    .max(SORT_MAX_LENGTH)
    .describe(
      `Comma-separated field:direction pairs (direction asc or desc, default asc). Allowed fields: ${fields.join(", ")}${custom}. Default: ${fallback}. Ties are broken by id. A pair naming an unknown field, a malformed pair, a repeated field or an empty value is ignored (the default applies when no valid pair remains) and named in the Sort-Ignored header with Preference-Applied: handling=lenient; send Prefer: handling=strict to have it refused with 422 naming the allowed fields instead.`,
    )
    .meta({ example: `${fields[0]}:desc` })
    .optional();
}

/**
 * The `data`/`hasMore`/`nextCursor` part of a list response (docs/api-contract.md §2.1); the facade lifts these three
 * fields into the top-level envelope.
 */
export function listOf<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item).max(PAGE_SIZE.max),
    hasMore: z.boolean().describe("false when this page is the end of the list."),
    nextCursor: NextCursorSchema,
  });
}

/**
 * zod issues as docs/api-contract.md §2.1 details, each path prefixed with `prefix`; an unrecognised-keys issue becomes
 * one detail per key. The one translation of validation issues (the facade's input errors and bulk items alike).
 */
export function issuesToDetails(issues: ZodError["issues"], prefix: readonly string[] = []): ErrorDetail[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path.map(String)];
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: [...path, key], message: `Unrecognized field ${key}` }));
    }
    return [{ path, message: issue.message }];
  });
}
