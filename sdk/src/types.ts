// Types derived from the generated `paths` (schema.ts) for any operation: its body, query, envelope data and pages.
// Written once for every operation; the resource methods (resources.ts) are generated from the document and use them.
import type { HttpMethod } from "openapi-typescript-helpers";
import type { paths } from "./schema.js";

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

/** An operation's success answer (200, or 201 for a create). */
type SuccessResponse<P extends Paths, M extends HttpMethod> =
  Operation<P, M> extends { responses: infer R }
    ? R extends { 200: infer A }
      ? A
      : R extends { 201: infer A }
        ? A
        : never
    : never;

/** The envelope's `data` of an operation's success answer (200, or 201 for a create). */
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

/**
 * A bulk upsert, typed by its mode: all-or-none (default) resolves to the operation's 200 (or 201) data; with
 * `{ mode: "partial" }` the valid items are committed and it resolves to the 207 data, one result per item.
 */
export interface BulkMethod<P extends BulkPath> {
  (body: Body<P, "post">, query?: { mode?: "all" }, options?: CallOptions): Promise<SuccessData<P, "post">>;
  (body: Body<P, "post">, query: { mode: "partial" }, options?: CallOptions): Promise<PartialData<P>>;
}
