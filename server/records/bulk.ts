// Bulk requests in their two modes (docs/api-contract.md §4.14): all-or-none (docs/api-contract.md §4, the default) and
// `?mode=partial`, which commits the valid items together and answers for each item. Shared by the four bulk endpoints;
// the set-based bulk services themselves are unchanged.

import { issuesToDetails } from "../contract/common";
import { savepoint } from "../db/transaction";
import { ApiError, boundedDetails, ERROR_LIMITS, type ErrorDetail, truncateText } from "../errors";
import { type InvalidItem, isInvalidItem, type PartialBulkResult } from "./bulk.schema";

/** Passes partial mode makes at most: each pass drops the items the service refused, all of them at once. */
const MAX_PASSES = 5;

type ItemError = NonNullable<PartialBulkResult["results"][number]["error"]>;

/**
 * Runs a bulk request in its mode.
 * - `all`: any item that failed its schema makes the request 422 `validation_error` with every item's issues (paths
 *   `<list>.<index>.…`, as before partial mode existed); otherwise `run` gets every item, all-or-none.
 * - `partial`: items that failed their schema are answered `error` at once; `run` gets the others, in request order,
 *   inside a savepoint; when it refuses some of them with `validation_error` details naming `<list>.<index>` (unknown
 *   references, duplicates within the request), those items are answered `error` with their details (paths relative to
 *   the item) and `run` is tried again without them, at most {@link MAX_PASSES} times. Whatever else `run` throws fails
 *   the whole request. Events are recorded only for what commits.
 * @param outcomes the service result as one `{ id, status }` per item given to `run`, in order.
 * @returns the service's own result (`all`), or the per-item answer (`partial`, answered 207).
 */
export async function runBulk<T, R>(options: {
  list: string;
  mode: "all" | "partial";
  items: ReadonlyArray<T | InvalidItem>;
  run: (items: T[]) => Promise<R>;
  outcomes: (result: R) => Array<{ id: string; status: "created" | "updated" }>;
}): Promise<R | PartialBulkResult> {
  const { list, items } = options;
  if (options.mode === "all") {
    const details = items.flatMap((item, index) =>
      isInvalidItem(item) ? issuesToDetails(item.invalid, [list, String(index)]) : [],
    );
    if (details.length > 0) throw new ApiError("validation_error", "Request validation failed", { details });
    return options.run(items as T[]);
  }

  const errors = new Map<number, ItemError>();
  items.forEach((item, index) => {
    if (isInvalidItem(item)) {
      errors.set(index, {
        code: "validation_error",
        message: "The item is not valid",
        details: boundedDetails(issuesToDetails(item.invalid)),
      });
    }
  });
  let pending = items.flatMap((item, index) => (isInvalidItem(item) ? [] : [index]));
  const done = new Map<number, { id: string; status: "created" | "updated" }>();
  for (let pass = 0; pending.length > 0; pass++) {
    const batch = pending;
    try {
      const result = await savepoint(() => options.run(batch.map((index) => items[index] as T)));
      for (const [position, outcome] of options.outcomes(result).entries())
        done.set(batch[position] as number, outcome);
      break;
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== "validation_error") throw error;
      const refused = itemDetails(error.details ?? [], list);
      if (refused.size === 0 || pass + 1 >= MAX_PASSES) throw error;
      for (const [position, details] of refused) {
        const index = batch[position];
        if (index !== undefined)
          errors.set(index, {
            code: error.code,
            message: truncateText(error.message, ERROR_LIMITS.message),
            details: boundedDetails(details),
          });
      }
      pending = batch.filter((_, position) => !refused.has(position));
    }
  }
  const results = items.map((_, index) => {
    const outcome = done.get(index);
    if (outcome) return { index, status: outcome.status, id: outcome.id, error: null };
    return { index, status: "error" as const, id: null, error: errors.get(index) ?? null };
  });
  const count = (status: string) => results.filter((result) => result.status === status).length;
  return {
    mode: "partial",
    created: count("created"),
    updated: count("updated"),
    failed: count("error"),
    total: items.length,
    results,
  };
}

/** The details of a service's refusal that name items of the batch (`<list>.<position>.…`), by position. */
function itemDetails(details: readonly ErrorDetail[], list: string): Map<number, ErrorDetail[]> {
  const byItem = new Map<number, ErrorDetail[]>();
  for (const detail of details) {
    const [name, position, ...rest] = detail.path;
    if (name !== list || position === undefined || !/^\d+$/.test(position)) continue;
    const found = byItem.get(Number(position)) ?? [];
    found.push({ path: rest, message: detail.message });
    byItem.set(Number(position), found);
  }
  return byItem;
}
