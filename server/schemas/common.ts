import { type ZodError, z } from "zod";
import type { ErrorDetail } from "../errors";

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
 * A calendar date, `YYYY-MM-DD`, such as a deal's expected close date (docs/api-contract.md §2.5). Its pattern admits
 * exactly 10 characters, which the document states as `maxLength` (a second check would only repeat the format's
 * issue).
 */
export const DateSchema = z.iso.date().meta({ maxLength: 10 });

/** A boolean query parameter: the strings `true` or `false`. */
export const BooleanQuerySchema = z
  .enum(["true", "false"])
  .transform((value) => value === "true")
  .describe("`true` or `false`.");

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
  cursor: IdSchema.describe(
    "The nextCursor of the previous page (the id of its last record). An id that names no record of the organisation gives 400 bad_request.",
  ).optional(),
  updatedAfter: z.iso
    .datetime({ offset: true })
    .max(DATE_TIME_MAX_LENGTH)
    .describe("ISO 8601 timestamp with a time zone (Z or ±hh:mm); only records with updatedAt strictly after it.")
    .meta({ example: "2026-11-20T00:00:00Z" })
    .optional(),
};

/** A `sort` query parameter documenting its allow-list (docs/api-contract.md §4.9). */
export function sortParam(fields: readonly string[], fallback: string) {
  return z
    .string()
    .max(200)
    .describe(
      `Comma-separated field:direction pairs (direction asc or desc, default asc). Allowed fields: ${fields.join(", ")}. Unknown fields are ignored; with none left the default sort applies: ${fallback}. Ties are broken by id.`,
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
    nextCursor: z
      .string()
      .max(64)
      .nullable()
      .describe("Id of the last record of this page, to pass as cursor for the next page; null on an empty page."),
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
