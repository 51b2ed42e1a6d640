// Conditional writes (docs/api-contract.md §4.13): a PATCH or DELETE with If-Match runs only if the record still has
// the version the client read, checked and applied in one transaction under the record's row lock, so two integrations
// cannot overwrite each other's changes silently.
import { transaction } from "../db/transaction";
import { ApiError } from "../errors";
import { lockForUpdate } from "./resource";

/** Tables of the records that take If-Match, by the first segment of their path. */
const TABLES: Readonly<Record<string, string>> = {
  accounts: "Account",
  contacts: "Contact",
  deals: "Deal",
  devices: "Device",
  tasks: "Task",
  "webhook-endpoints": "WebhookEndpoint",
};

/**
 * Whether an `If-Match` or `If-None-Match` value names `tag` (RFC 9110 §13.1): `*`, or a comma-separated list of entity
 * tags; `weak` compares without the `W/` prefix (If-None-Match), else only strong tags match (If-Match).
 */
export function tagMatches(header: string, tag: string, weak: boolean): boolean {
  if (header.trim() === "*") return true;
  return header.split(",").some((candidate) => {
    const value = candidate.trim();
    if (value.startsWith("W/")) return weak && value.slice(2) === tag;
    return value === tag;
  });
}

/**
 * Runs `write` only if the record's current representation, read by `read` and tagged by `tagOf`, matches `ifMatch`:
 * all in one transaction with the record's row locked first (records of a resource outside the known tables are read
 * and compared without the lock).
 * @returns what `write` returns.
 * @throws ApiError `precondition_failed` (412, with the current `ETag`) when the tag does not match; `not_found` (404)
 *         when the record does not exist in the organisation.
 */
export function writeIfMatch<T>(options: {
  resource: string;
  orgId: string;
  id: string;
  ifMatch: string;
  read: () => Promise<unknown>;
  tagOf: (data: unknown) => string;
  write: () => Promise<T>;
}): Promise<T> {
  return transaction(async () => {
    const table = TABLES[options.resource];
    if (table) await lockForUpdate(table, table, options.orgId, options.id);
    const current = options.tagOf(await options.read());
    if (!tagMatches(options.ifMatch, current, false)) {
      throw new ApiError(
        "precondition_failed",
        `The record changed since you read it (If-Match ${options.ifMatch.slice(0, 100)}, now ${current}): GET it again, reapply your change and retry`,
        { headers: { ETag: current } },
      );
    }
    return options.write();
  });
}
