import { ApiError } from "../errors";
import { accountsByIds } from "../records/accounts/service";
import type { Exchange, Step } from "./exchange";
import { EXPANDABLE, openApiDocument } from "./openapi";

type Json = Record<string, unknown>;

let fieldsByPath: Map<string, string[]> | undefined;

/**
 * The fields of the records each GET route answers with, read once from the OpenAPI document (the same zod schemas):
 * path → property names of the record (of a list's items).
 */
export function recordFields(): Map<string, string[]> {
  if (fieldsByPath) return fieldsByPath;
  const document = openApiDocument("http://localhost") as Json & { paths: Record<string, Json>; components: Json };
  const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
  const resolve = (schema: Json | undefined): Json | undefined => {
    const ref = schema?.$ref;
    return typeof ref === "string" ? resolve(schemas[ref.split("/").pop() as string]) : schema;
  };
  fieldsByPath = new Map();
  for (const [path, item] of Object.entries(document.paths)) {
    const get = (item as { get?: Json }).get;
    const success = (get?.responses as Record<string, Json> | undefined)?.["200"];
    const envelope = resolve(
      ((success?.content as Record<string, Json> | undefined)?.["application/json"] as Json | undefined)?.schema as
        | Json
        | undefined,
    );
    let data = resolve((envelope?.properties as Record<string, Json> | undefined)?.data);
    if (data?.type === "array") data = resolve(data.items as Json);
    const properties = data?.properties as Record<string, unknown> | undefined;
    if (properties && "id" in properties) {
      fieldsByPath.set(
        path,
        Object.keys(properties).filter((field) => field !== "account"),
      );
    }
  }
  return fieldsByPath;
}

function refuse(parameter: string, message: string): ApiError {
  return new ApiError("validation_error", `${parameter}: ${message}`, { details: [{ path: [parameter], message }] });
}

async function expandAccounts(exchange: Exchange, records: Json[], via: string): Promise<Json[]> {
  const orgId = exchange.principal?.orgId ?? "";
  const ids = records.flatMap((record) => {
    if (via === "accounts")
      return ((record.accounts as Json[] | undefined) ?? []).map((link) => String(link.accountId));
    if (via === "objectId") return record.objectType === "Account" ? [String(record.objectId)] : [];
    return record.accountId ? [String(record.accountId)] : [];
  });
  const accounts = await accountsByIds(orgId, ids);
  return records.map((record) => {
    if (via === "accounts") {
      const links = ((record.accounts as Json[] | undefined) ?? []).map((link) => ({
        ...link,
        account: accounts.get(String(link.accountId)) ?? null,
      }));
      return { ...record, accounts: links };
    }
    const id = via === "objectId" ? (record.objectType === "Account" ? record.objectId : null) : record.accountId;
    return { ...record, account: id ? (accounts.get(String(id)) ?? null) : null };
  });
}

/**
 * Representation (docs/api-contract.md §4.9.4): `fields=` (sparse fieldsets: a comma-separated list of the record's
 * fields, `id` always included) on every GET that answers records, and `expand=account` on contacts, deals, devices,
 * tasks and notes (the referenced account under `account`, or under each relationship of a contact; null when it names
 * none; one query a page). Both are taken out of the query before the input is read and applied to the records before
 * the answer is serialised.
 * @throws ApiError `validation_error` (422) naming `fields` or `expand` for an unknown field or expansion.
 */
export const representation: Step = async (exchange, next) => {
  const route = exchange.route;
  if (exchange.method !== "GET" || !route?.procedure) return next();
  const fields = exchange.query.get("fields");
  const expand = exchange.query.get("expand");
  if (fields === undefined && expand === undefined) return next();
  const known = recordFields().get(route.path);
  if (fields !== undefined && !known) throw refuse("fields", `not supported on ${route.path}`);
  const via = EXPANDABLE[route.path];
  if (expand !== undefined && (expand !== "account" || !via)) {
    throw refuse("expand", via ? "the only expansion is account" : `not supported on ${route.path}`);
  }
  const wanted = fields === undefined ? undefined : fields.split(",").map((field) => field.trim());
  const unknown = wanted?.filter((field) => !known?.includes(field)) ?? [];
  if (unknown.length > 0) {
    throw refuse("fields", `unknown field ${unknown.join(", ")}; allowed: ${known?.join(", ")}`);
  }
  exchange.query.delete("fields");
  exchange.query.delete("expand");
  exchange.reshape = async (records) => {
    const expanded = via && expand ? await expandAccounts(exchange, records, via) : records;
    if (!wanted) return expanded;
    const keep = new Set(["id", ...wanted, ...(expand && via !== "accounts" ? ["account"] : [])]);
    return expanded.map((record) => Object.fromEntries(Object.entries(record).filter(([key]) => keep.has(key))));
  };
  return next();
};
