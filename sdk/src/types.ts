// Types derived from the generated `paths` (schema.ts) for any operation: its body, query, envelope data and pages.
// Written once for every operation; the resource methods (resources.ts) are generated from the document and use them.
import type { HttpMethod } from "openapi-typescript-helpers";
import type { components, paths } from "./schema.js";

type Paths = keyof paths;
/** The operation of `paths[P]` for method `M` (lower case, as the document writes it). */
type Operation<P extends Paths, M extends HttpMethod> = NonNullable<paths[P][M]>;
/** The JSON body of one response: the envelope. */
type JsonOf<R> = R extends { content: { "application/json": infer B } } ? B : never;
/** The envelope's `data` of one response. */
type EnvelopeData<R> = JsonOf<R> extends { data: infer D } ? D : never;

/** The JSON body an operation takes. */
export type Body<P extends Paths, M extends HttpMethod> =
  Operation<P, M> extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;

/** The query parameters an operation takes. */
export type Query<P extends Paths, M extends HttpMethod> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/**
 * An operation's success answer: 200, 201 for a create, 202 for work done afterwards; an operation documenting two of
 * them (a replay answers 202, its dry run 200) answers either.
 */
type SuccessResponse<P extends Paths, M extends HttpMethod> =
  Operation<P, M> extends { responses: infer R } ? R[Extract<keyof R, 200 | 201 | 202>] : never;

/** The envelope's `data` of an operation's success answer (200, 201 for a create, 202 for work done afterwards). */
export type SuccessData<P extends Paths, M extends HttpMethod> = EnvelopeData<SuccessResponse<P, M>>;

/** The envelope's `data` of a bulk operation's 207 answer (`?mode=partial`: one result per item). */
export type PartialData<P extends Paths> =
  Operation<P, "post"> extends { responses: { 207: infer A } } ? EnvelopeData<A> : never;

/** Paths whose GET answers a page (`data` array with `hasMore` and `nextCursor`). */
export type ListPath = {
  [P in Paths]: JsonOf<SuccessResponse<P, "get">> extends { data: unknown[]; hasMore: boolean } ? P : never;
}[Paths];

/** One record of a list path's pages. */
export type ItemOf<P extends ListPath> = SuccessData<P, "get"> extends Array<infer I> ? I : never;

/** The query parameters of a list path, without the cursor (the client follows it). */
export type ListQuery<P extends ListPath> = Omit<Query<P, "get">, "cursor">;

/** Per call: extra headers (`If-Match`, your own `Idempotency-Key`) and an `AbortSignal`. */
export interface CallOptions {
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** What a generated resource method hands to the client: the operation and its parameters. */
export interface OperationCall {
  path?: Record<string, string>;
  query?: object;
  body?: unknown;
}

/** The two calls every generated resource method is made of (createClient implements them). */
export interface Caller {
  /** Runs one operation and resolves to its envelope's `data`; throws ApiError on an error answer. */
  send<T>(method: HttpMethod, path: Paths, call: OperationCall, options?: CallOptions): Promise<T>;
  /** Every record of a list, page after page, following `nextCursor`. */
  list<P extends ListPath>(path: P, call: OperationCall, options?: CallOptions): AsyncGenerator<ItemOf<P>>;
}

/** Bulk paths: POSTs that answer 207 in partial mode. */
export type BulkPath = { [P in Paths]: [PartialData<P>] extends [never] ? never : P }[Paths];

/** The records that carry custom fields, by the API's name for them. */
export type CustomFieldResource = "account" | "contact" | "deal" | "device" | "task";

/**
 * An organisation's custom fields: for each resource the shape of its records' `customFields`. Write it with
 * `npm run sdk:generate -- --custom-fields` (from the API's `GET /custom-fields/schema`) and pass it to
 * `createClient<CustomFields>()`; without it `customFields` is the API's generic object of values.
 */
export type CustomFieldTypes = { [R in CustomFieldResource]?: object };

/** `customFields` of resource `R` under the organisation's types `F`, or the generic object of values. */
export type ValuesOf<F, R extends CustomFieldResource> = F extends { [K in R]: infer V }
  ? V
  : components["schemas"]["CustomFieldValues"];

/** `T` (a record, a page, a list of them) with every `customFields` typed as `V`. */
export type WithValues<T, V> = T extends readonly (infer I)[]
  ? WithValues<I, V>[]
  : T extends object
    ? { [K in keyof T]: K extends "customFields" ? V : WithValues<T[K], V> }
    : T;

/** A body (a create, an update, bulk items) whose `customFields` may give any of `V`, `null` clearing one. */
export type WithValuesIn<T, V> = T extends readonly (infer I)[]
  ? WithValuesIn<I, V>[]
  : T extends object
    ? { [K in keyof T]: K extends "customFields" ? { [F in keyof V]?: V[F] | null } : WithValuesIn<T[K], V> }
    : T;

/** The filter operators of `customFields.<key>[op]` (the API's list documentation says which type takes which). */
export type CustomFieldOperator = "eq" | "ne" | "gt" | "gte" | "lt" | "lte" | "in" | "contains";

/** The custom field filters of a list: `customFields.<key>` and `customFields.<key>[op]`, for the keys of `V`. */
export type CustomFieldQuery<V> = {
  [K in keyof V & string as `customFields.${K}` | `customFields.${K}[${CustomFieldOperator}]`]?:
    | string
    | number
    | boolean;
};

/**
 * A bulk upsert, typed by its mode: all-or-none (default) resolves to the operation's 200 (or 201) data; with
 * `{ mode: "partial" }` the valid items are committed and it resolves to the 207 data, one result per item. `V` types
 * the items' `customFields`.
 */
export interface BulkMethod<P extends BulkPath, V = never> {
  (body: BulkBody<P, V>, query?: { mode?: "all" }, options?: CallOptions): Promise<SuccessData<P, "post">>;
  (body: BulkBody<P, V>, query: { mode: "partial" }, options?: CallOptions): Promise<PartialData<P>>;
}

/** A bulk body with its items' `customFields` typed as `V` (when given). */
type BulkBody<P extends BulkPath, V> = [V] extends [never] ? Body<P, "post"> : WithValuesIn<Body<P, "post">, V>;
