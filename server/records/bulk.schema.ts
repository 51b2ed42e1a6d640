// Per-item bulk results (docs/api-contract.md §2.12, §4.14): the shared pieces of `?mode=partial` on the four bulk
// endpoints.
import { type ZodError, z } from "zod";
import { IdSchema } from "../contract/common";
import { ERROR_CODES, ERROR_LIMITS } from "../errors";

/**
 * `mode` of a bulk request: `all` (default: all-or-none, docs/api-contract.md §4) or `partial` (commit the valid items,
 * 207).
 */
export const BulkModeSchema = z
  .enum(["all", "partial"])
  .default("all")
  .describe(
    "all (default): every item is applied or none is, and any invalid item makes the request 422. partial: the valid items are committed together and the answer is 207 with one result per item (created, updated or error).",
  );

/** What every bulk operation's OpenAPI description says about `?mode=partial`. */
export const PARTIAL_MODE =
  "With ?mode=partial the valid items are committed together and the answer is 207 with one result per item in request order (created, updated or error with the item's own error); refused per item are items that fail their schema, unknown references and keys repeated within the request. 207 also when all items succeed or all fail.";

/** A bulk item that failed its schema: kept in place so that partial mode can answer for it. */
export interface InvalidItem {
  readonly invalid: ZodError["issues"];
}

/** Whether a parsed bulk item is an {@link InvalidItem}. */
export function isInvalidItem(item: unknown): item is InvalidItem {
  return typeof item === "object" && item !== null && "invalid" in item && Array.isArray((item as InvalidItem).invalid);
}

/**
 * A bulk item schema that never fails the whole request: an item that fails `item` becomes an {@link InvalidItem}
 * carrying its issues (zod's `catch`), so that all-or-none mode refuses the request with every item's issues and
 * partial mode answers per item. Documented as `item` itself.
 */
export function bulkItem<T extends z.ZodType>(item: T) {
  return item.catch((ctx) => ({ invalid: ctx.error.issues }) as InvalidItem as z.output<T>) as unknown as z.ZodType<
    z.output<T> | InvalidItem,
    z.input<T>
  >;
}

/** One item's outcome in a partial bulk answer. */
export const PartialBulkItemSchema = z.object({
  index: z.int().min(0).max(499).describe("Position of the item in the request, from 0."),
  status: z.enum(["created", "updated", "error"]).describe("What happened to it; error: nothing was written for it."),
  id: IdSchema.nullable().describe("Id of the record it created or updated; null on error."),
  error: z
    .object({
      code: z
        .enum(Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES])
        .describe("Error code, as in the error envelope (validation_error)."),
      message: z.string().max(ERROR_LIMITS.message).describe("What is wrong with this item."),
      details: z
        .array(
          z.object({
            path: z
              .array(z.string().max(ERROR_LIMITS.segment))
              .max(ERROR_LIMITS.pathSegments)
              .describe('Where in the item, e.g. ["accountId"].'),
            message: z.string().max(ERROR_LIMITS.message).describe("What is wrong there."),
          }),
        )
        .max(ERROR_LIMITS.details)
        .describe("The item's issues, paths relative to the item."),
    })
    .nullable()
    .describe("Why the item was refused; null unless status is error."),
});

/** The 207 answer of a bulk request in partial mode (docs/api-contract.md §4.14). */
export const PartialBulkResultSchema = z
  .object({
    mode: z.literal("partial").describe("Always partial: this answer has one result per item."),
    created: z.int().min(0).max(500).describe("Items that created a record."),
    updated: z.int().min(0).max(500).describe("Items that updated an existing record."),
    failed: z.int().min(0).max(500).describe("Items refused; nothing was written for them."),
    total: z.int().min(0).max(500).describe("Items sent."),
    results: z.array(PartialBulkItemSchema).max(500).describe("One result per item, in request order."),
  })
  .meta({
    id: "PartialBulkResult",
    example: {
      mode: "partial",
      created: 1,
      updated: 0,
      failed: 1,
      total: 2,
      results: [
        { index: 0, status: "created", id: "cm7k2x0a80001northwind0", error: null },
        {
          index: 1,
          status: "error",
          id: null,
          error: {
            code: "validation_error",
            message: "The item is not valid",
            details: [{ path: ["name"], message: "Too small: expected string to have >=1 characters" }],
          },
        },
      ],
    },
  });

/** The 207 answer's type. */
export type PartialBulkResult = z.infer<typeof PartialBulkResultSchema>;
