// @msp-crm/sdk: a typed client of the MSP CRM public API. Types and resource methods come from the served OpenAPI
// document (`npm run sdk:generate` writes src/schema.ts with openapi-typescript and src/resources.ts); requests go
// through openapi-fetch.
import { createHmac, timingSafeEqual } from "node:crypto";
import createFetchClient, { type FetchResponse, type MaybeOptionalInit } from "openapi-fetch";
import type { HttpMethod, PathsWithMethod, RequiredKeysOf } from "openapi-typescript-helpers";
import { resources } from "./resources.js";
import type { paths } from "./schema.js";
import type { Caller, CallOptions, CustomFieldTypes, ItemOf, ListPath, ListQuery, OperationCall } from "./types.js";

export type { components, paths } from "./schema.js";
export type {
  Body,
  BulkMethod,
  CallOptions,
  CustomFieldOperator,
  CustomFieldQuery,
  CustomFieldResource,
  CustomFieldTypes,
  ItemOf,
  ListPath,
  ListQuery,
  PartialData,
  Query,
  SuccessData,
  ValuesOf,
  WithValues,
  WithValuesIn,
} from "./types.js";

/** The API's error envelope as one typed error: every non-2xx answer the client does not retry. */
export class ApiError extends Error {
  /** HTTP status. */
  readonly status: number;
  /** Error code (`not_found`, `validation_error`, …); the API's `/docs/errors` page lists every code. */
  readonly code: string;
  /** Validation issues: where (path segments) and what. */
  readonly details: ReadonlyArray<{ path: string[]; message: string }>;
  /** The request id, `req_…` (also the `X-Request-Id` header): quote it to support. */
  readonly requestId: string | null;
  /** Link to the error reference. */
  readonly docsUrl: string | null;

  constructor(status: number, body: unknown) {
    const error = (body as { error?: { code?: string; message?: string; details?: []; docsUrl?: string } })?.error;
    super(error?.message ?? `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.code = error?.code ?? "http_error";
    this.details = error?.details ?? [];
    this.requestId = (body as { requestId?: string })?.requestId ?? null;
    this.docsUrl = error?.docsUrl ?? null;
  }
}

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** `msp_live_…` or `msp_test_…`. */
  apiKey: string;
  /** The API's base URL, with `/api/v1`; default `http://localhost:3000/api/v1`. */
  baseUrl?: string;
  /** The fetch to use (tests, proxies); default the global fetch. */
  fetch?: typeof fetch;
  /** Retries after a 429, a 503 or a network error; default 3. */
  maxRetries?: number;
}

const WRITES = new Set(["POST", "PATCH", "PUT", "DELETE"]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Wait before retry `attempt` (0-based): `Retry-After` seconds when given, else 0.25 s × 2^attempt with jitter. */
function delayMs(attempt: number, response?: Response): number {
  const header = response?.headers.get("retry-after");
  if (header !== null && header !== undefined && /^\d+$/.test(header)) return Number(header) * 1000;
  return 250 * 2 ** attempt * (0.5 + Math.random() / 2);
}

/**
 * A fetch that retries 429 and 503 answers (honouring `Retry-After`) and network errors, up to `maxRetries` times.
 * Every write gets one `Idempotency-Key` before its first attempt, reused by its retries, so a create retried after
 * the server processed it is replayed, never done twice (the API keeps a key's answer for 24 hours).
 */
function retryingFetch(base: typeof fetch, maxRetries: number): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    if (WRITES.has(request.method) && !headers.has("idempotency-key")) {
      headers.set("Idempotency-Key", crypto.randomUUID());
    }
    const body = request.body ? await request.arrayBuffer() : undefined;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await base(request.url, { method: request.method, headers, body, signal: request.signal });
      } catch (error) {
        if (attempt >= maxRetries || request.signal.aborted) throw error;
        await sleep(delayMs(attempt));
        continue;
      }
      if ((response.status === 429 || response.status === 503) && attempt < maxRetries) {
        await response.body?.cancel();
        await sleep(delayMs(attempt, response));
        continue;
      }
      return response;
    }
  };
}

/** An event of the events feed, as `GET /events` returns it. */
export type FeedEvent = ItemOf<"/events">;

/**
 * A client of the API.
 * - Resource methods, generated from the document: `crm.accounts.list(query)` (every record, page after page, as an
 *   async iterable), `.get(id)`, `.create(body)`, `.update(id, body)`, `.delete(id)`, `.bulk(body)` (typed by mode:
 *   `{ mode: "partial" }` resolves to the 207 shape), and the same for every resource, webhook endpoints and events.
 * - `GET`, `POST`, `PATCH`, `DELETE`: every operation, typed by path (openapi-fetch).
 * - `list(path, query)`: every record of a list, page after page.
 * - `events.follow()`: the events feed, forever, page by page with the cursor to keep.
 * Every call resolves to the envelope's `data` and throws {@link ApiError} on an error answer. Every request sends
 * `Prefer: handling=strict`, so an invalid `sort` throws (422) instead of being ignored. `F`, the organisation's
 * custom fields (a type `npm run sdk:generate -- --custom-fields` writes), types the `customFields` of records, bodies
 * and list filters: `createClient<CustomFields>({ … })`.
 */
export function createClient<F extends CustomFieldTypes = Record<never, never>>(options: ClientOptions) {
  const raw = createFetchClient<paths>({
    baseUrl: (options.baseUrl ?? "http://localhost:3000/api/v1").replace(/\/$/, ""),
    // Strict handling: a sort the list cannot apply is an ApiError (422) here, where the API would ignore it for a
    // client that does not ask; a call's own `Prefer` header replaces this one.
    headers: { Authorization: `Bearer ${options.apiKey}`, Prefer: "handling=strict" },
    fetch: retryingFetch(options.fetch ?? globalThis.fetch, options.maxRetries ?? 3),
  });

  async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>) {
    const { data, error, response } = await call;
    if (error !== undefined || !response.ok) throw new ApiError(response.status, error);
    return (data as { data: unknown }).data as T extends { data: infer D } ? D : never;
  }

  async function* pages<P extends ListPath>(
    path: P,
    call: OperationCall,
    options: CallOptions = {},
  ): AsyncGenerator<ItemOf<P>> {
    let cursor: string | undefined;
    for (;;) {
      const params = { path: call.path, query: { ...(call.query ?? {}), ...(cursor ? { cursor } : {}) } };
      const { data, error, response } = await (raw.GET(
        path as never,
        {
          params,
          headers: options.headers,
          signal: options.signal,
        } as never,
      ) as Promise<{
        data?: { data: ItemOf<P>[]; hasMore: boolean; nextCursor: string | null };
        error?: unknown;
        response: Response;
      }>);
      if (error !== undefined || !data) throw new ApiError(response.status, error);
      yield* data.data;
      if (!data.hasMore || !data.nextCursor) return;
      cursor = data.nextCursor;
    }
  }

  const caller: Caller = {
    send: (method, path, call, options = {}) => {
      const send = raw[method.toUpperCase() as "GET"] as unknown as (
        path: string,
        init: object,
      ) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
      const init = {
        params: { path: call.path, query: call.query },
        body: call.body,
        headers: options.headers,
        signal: options.signal,
      };
      return unwrap(send(path, init)) as never;
    },
    list: pages,
  };
  const generated = resources<F>(caller);

  /** Every record of a list, page after page: `for await (const a of crm.list("/accounts", { limit: 100 }))`. */
  function list<P extends ListPath>(path: P, query?: ListQuery<P>): AsyncGenerator<ItemOf<P>> {
    return pages(path, { query: query as object | undefined });
  }

  return {
    /** Every GET operation: `await client.GET("/accounts/{id}", { params: { path: { id } } })` → the record. */
    GET: ((path: never, init?: never) => unwrap(raw.GET(path, init))) as unknown as UnwrappedMethod<"get">,
    /** Every POST operation: `await client.POST("/accounts", { body: { name } })` → the created record. */
    POST: ((path: never, init?: never) => unwrap(raw.POST(path, init))) as unknown as UnwrappedMethod<"post">,
    /** Every PATCH operation. */
    PATCH: ((path: never, init?: never) => unwrap(raw.PATCH(path, init))) as unknown as UnwrappedMethod<"patch">,
    /** Every DELETE operation. */
    DELETE: ((path: never, init?: never) => unwrap(raw.DELETE(path, init))) as unknown as UnwrappedMethod<"delete">,
    list,
    ...generated,
    events: {
      ...generated.events,
      /**
       * Follows the events feed from `after` (a cursor you kept; none: the start of the feed) until `signal` aborts:
       * each page of new events with the cursor to keep once you have applied them. Polls every `intervalMs` (default
       * 5,000 ms) when nothing is new. A cursor older than the feed's retention throws {@link ApiError} `cursor_expired`.
       */
      async *follow(
        opts: { after?: string; signal?: AbortSignal; intervalMs?: number; limit?: number } = {},
      ): AsyncGenerator<{ events: FeedEvent[]; cursor: string | null }> {
        let cursor = opts.after;
        while (!opts.signal?.aborted) {
          const query = { limit: opts.limit ?? 100, ...(cursor ? { cursor } : {}) };
          const { data, error, response } = await raw.GET("/events", { params: { query }, signal: opts.signal });
          if (error !== undefined || !data) throw new ApiError(response.status, error);
          if (data.nextCursor) cursor = data.nextCursor;
          if (data.data.length > 0) yield { events: data.data, cursor: cursor ?? null };
          if (!data.hasMore) {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, opts.intervalMs ?? 5_000);
              opts.signal?.addEventListener("abort", () => {
                clearTimeout(timer);
                resolve();
              });
            });
          }
        }
      },
    },
  };
}

/** The envelope's `data` of a path's success answer. */
type DataOf<P extends keyof paths, M extends HttpMethod, Init> =
  NonNullable<FetchResponse<paths[P][M] & Record<string | number, unknown>, Init, "application/json">["data"]> extends {
    data: infer D;
  }
    ? D
    : never;

/** One HTTP method of the client: typed by path like openapi-fetch's, resolving to the envelope's `data`. */
export type UnwrappedMethod<M extends HttpMethod> = <
  P extends PathsWithMethod<paths, M>,
  Init extends MaybeOptionalInit<paths[P], M>,
>(
  url: P,
  ...init: RequiredKeysOf<Init> extends never
    ? [(Init & { [key: string]: unknown })?]
    : [Init & { [key: string]: unknown }]
) => Promise<DataOf<P, M, Init>>;

/**
 * Verifies a webhook delivery's `Service-Signature` (the API's `/docs/webhooks` page): HMAC-SHA256 over
 * `<t>.<raw body>` keyed with the whole signing secret, compared in constant time with each `v1=` (two during a
 * rotation), and `t` within `toleranceSeconds` (default 300) of now. Pass the body exactly as received.
 * @returns the parsed event.
 * @throws Error when the header is missing or malformed, no signature matches, or the timestamp is too old.
 */
export function verifyWebhook(
  rawBody: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  secret: string,
  opts: { toleranceSeconds?: number; now?: Date } = {},
): FeedEvent {
  const header =
    headers instanceof Headers
      ? headers.get("service-signature")
      : ([headers["service-signature"] ?? headers["Service-Signature"]].flat()[0] ?? null);
  if (!header) throw new Error("Service-Signature header missing");
  const parts = header.split(",").map((part) => part.trim().split("="));
  const t = Number(parts.find(([name]) => name === "t")?.[1]);
  const signatures = parts.filter(([name]) => name === "v1").map(([, value]) => value ?? "");
  if (!Number.isInteger(t) || signatures.length === 0) throw new Error("Service-Signature is malformed");
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - t) > (opts.toleranceSeconds ?? 300)) throw new Error("Webhook timestamp outside the tolerance");
  const expected = Buffer.from(createHmac("sha256", secret).update(`${t}.${rawBody}`).digest("hex"));
  const valid = signatures.some((signature) => {
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!valid) throw new Error("Webhook signature does not match");
  return JSON.parse(rawBody) as FeedEvent;
}
