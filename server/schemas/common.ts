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

/** A boolean query parameter: the strings `true` or `false`. */
export const BooleanQuerySchema = z
  .enum(["true", "false"])
  .transform((value) => value === "true")
  .describe("`true` or `false`.");

/**
 * Longest cursor the service makes, in characters (docs/api-contract.md §4.9.1): a list's names a record id of at most
 * 64 characters (103 with its signature), the events feed's a position (34).
 */
export const CURSOR_MAX_LENGTH = 128;

/**
 * The `cursor` query parameter of a list or of the events feed (docs/api-contract.md §4.9.1): opaque. Its bound is
 * documented but not checked here: the list refuses every string it did not make, whatever its length or characters,
 * with the same 400 `bad_request`, so a cursor is never 422.
 */
export function cursorParam(description: string) {
  return z.string().describe(description).meta({ maxLength: CURSOR_MAX_LENGTH }).optional();
}

/** The `nextCursor` of a list page (docs/api-contract.md §2.1, §4.9.1). */
export const NextCursorSchema = z
  .string()
  .max(CURSOR_MAX_LENGTH)
  .nullable()
  .describe(
    "Opaque: pass it as cursor to continue after this page. Present on the last page too (null only on an empty page), so a later request continues with records added since.",
  );

/**
 * Query parameters shared by every list endpoint (docs/api-contract.md §4.9): `limit` (1–100, default 50), `cursor`
 * (the `nextCursor` of the previous page), `updatedAfter` (ISO 8601; only records whose `updatedAt` is strictly later),
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
    "The nextCursor of the previous page (opaque). A cursor the service did not make, or one naming a record this list no longer has, gives 400 bad_request: start again from the first page.",
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

/**
 * Parses `sort` (`field:direction` pairs, comma-separated; direction `asc` or `desc` in any case, default `asc`)
 * against an allow-list (docs/api-contract.md §4.9); with `customFields`, `customFields.<key>` too (docs/api-contract.md
 * §4.9.5), which the list then checks against the organisation's fields.
 * @returns the terms in order, or why the value is refused (an unknown field, a malformed pair, a repeated field),
 *   naming the allowed fields.
 */
export function parseSortParam(raw: string, allowed: readonly string[], customFields = false): SortTerm[] | string {
  const terms: SortTerm[] = [];
  const custom = customFields ? ", customFields.<key>" : "";
  const expected = `allowed fields: ${allowed.join(", ")}${custom}, each as field, field:asc or field:desc`;
  for (const pair of raw.split(",")) {
    const parts = pair.trim().split(":");
    const [field = "", direction = "asc"] = parts;
    const known = allowed.includes(field) || (customFields && CUSTOM_FIELD_PATH.test(field));
    if (!known) return `${JSON.stringify(field)} is not a sort field of this list; ${expected}`;
    const dir = direction.toLowerCase();
    if (parts.length > 2 || (dir !== "asc" && dir !== "desc"))
      return `${JSON.stringify(pair.trim())} is not field:asc or field:desc; ${expected}`;
    if (terms.some((term) => term.field === field)) return `${field} appears twice; ${expected}`;
    terms.push({ field, direction: dir });
  }
  return terms;
}

/**
 * A `sort` query parameter documenting its allow-list (docs/api-contract.md §4.9): an unknown field, a malformed pair
 * or a repeated field is 422 `validation_error` naming the allowed fields. `customFields` admits
 * `customFields.<key>` (docs/api-contract.md §4.9.5), checked by the list against the organisation's fields.
 */
export function sortParam(fields: readonly string[], fallback: string, customFields = false) {
  const custom = customFields
    ? ", and customFields.<key> of a custom field of any type but multiSelect (values missing sort last)"
    : "";
  return z
    .string()
    .max(200)
    .superRefine((value, context) => {
      const parsed = parseSortParam(value, fields, customFields);
      if (typeof parsed === "string") context.addIssue({ code: "custom", message: parsed });
    })
    .describe(
      `Comma-separated field:direction pairs (direction asc or desc, default asc). Allowed fields: ${fields.join(", ")}${custom}; anything else is refused (422). Default: ${fallback}. Ties are broken by id.`,
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
