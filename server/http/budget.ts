import {
  acquireExpensiveSlot,
  databaseBudgetRefusal,
  type ExpensiveOperation,
} from "../platform/limits/organisation-budgets";
import type { Exchange, Step } from "./exchange";

// A list's `sort` naming a custom field: sorted by a jsonb expression no index serves (docs/api-contract.md §4.9.5).
const CUSTOM_FIELD_SORT = /(?:^|,)\s*customFields\./;

/** What expensive work the request is, if any: its route's mark, or a list sorted by a custom field. */
function expensiveOperation(exchange: Exchange): ExpensiveOperation | undefined {
  const marked = exchange.route?.meta.expensive;
  if (marked) return marked;
  const sort = exchange.input?.sort;
  if (exchange.route?.meta.envelope === "list" && typeof sort === "string" && CUSTOM_FIELD_SORT.test(sort)) {
    return "custom-field sort";
  }
  return undefined;
}

/**
 * Budget (docs/api-contract.md §8.5; docs/architecture.md, "Budgets: what one request may cost"): refuses every
 * request of an organisation that has used its database time for now, and runs an expensive operation (a search, a
 * list sorted by a custom field, a bulk write, an erasure) only in one of the organisation's concurrent slots, given
 * back when the answer is ready. Runs after the input is read (a sort names the custom field) and before the
 * operation.
 * @throws ApiError `rate_limited` (429) with `Retry-After` and the reason.
 */
export const budget: Step = async (exchange, next) => {
  const principal = exchange.principal;
  if (!principal) return next();
  const refusal = await databaseBudgetRefusal(principal.orgId, principal.rateLimit.perOrg);
  if (refusal) throw refusal;
  const operation = expensiveOperation(exchange);
  if (!operation) return next();
  const release = await acquireExpensiveSlot(principal.orgId, principal.rateLimit.perOrg, operation);
  try {
    return await next();
  } finally {
    await release();
  }
};
