import type { AnyRouter } from "@trpc/server";
import {
  forEachOpenApiProcedure,
  getInputOutputParsers,
  getPathParameters,
  instanceofZodTypeCoercible,
  instanceofZodTypeKind,
  instanceofZodTypeLikeVoid,
  instanceofZodTypeObject,
  unwrapZodType,
} from "trpc-to-openapi";
import type { Meta } from "../trpc";

/** Methods whose input is the JSON body; the others take theirs from the query. */
export const BODY_METHODS: ReadonlySet<string> = new Set(["POST", "PATCH", "PUT"]);

/** One segment of a route's path template: a literal (`accounts`) or a parameter (`{id}`). */
type Segment = { literal: string } | { param: string };

/**
 * One REST operation: method, path template (`/accounts/{id}`), its segments and parameter names, its meta (scope,
 * success status, list envelope, OpenAPI block), and what serves it: a tRPC procedure (dotted path in the router) or a
 * served document.
 */
export interface RouteEntry {
  method: string;
  path: string;
  segments: Segment[];
  pathParams: string[];
  meta: Meta;
  /** `accounts.get`: the procedure to call through tRPC's caller; absent for documents. */
  procedure?: string;
  /**
   * Query parameters whose schema is a number or a boolean, by type: their text is converted before validation
   * (`limit=20` → 20, `force=true` → true); text of another form stays text for the schema to refuse.
   */
  typedQuery: ReadonlyMap<string, "number" | "boolean">;
  /**
   * The query parameters the operation takes, as its OpenAPI document names them (`limit`, `lifecycle`,
   * `name[eq]`, …; a body method only its `meta.query`): what an unknown parameter's hint is chosen from.
   */
  queryParams: readonly string[];
  /** The procedure takes no input (`z.void()`): it is called without one, and any query or body field is refused. */
  voidInput?: boolean;
  /** Which served document this route answers with, for `/openapi.json` and `/postman.json`. */
  document?: "openapi" | "postman";
}

function segmentsOf(path: string): Segment[] {
  return path
    .split("/")
    .filter(Boolean)
    .map((part) => {
      const param = /^\{(.+)\}$/.exec(part)?.[1];
      return param ? { param } : { literal: part };
    });
}

function inputSchemaOf(procedure: unknown) {
  const { inputParser } = getInputOutputParsers(procedure as Parameters<typeof getInputOutputParsers>[0]);
  return unwrapZodType(inputParser, true);
}

function queryParamsOf(procedure: unknown, method: string, pathParams: readonly string[], meta: Meta): string[] {
  if (BODY_METHODS.has(method)) return [...(meta.query ?? [])];
  const schema = inputSchemaOf(procedure) as unknown as { shape?: Record<string, unknown> };
  if (!instanceofZodTypeObject(schema as never) || !schema.shape) return [];
  return Object.keys(schema.shape).filter((name) => !pathParams.includes(name));
}

function typedQueryKeys(procedure: unknown): Map<string, "number" | "boolean"> {
  const schema = inputSchemaOf(procedure) as unknown as { shape?: Record<string, unknown> };
  const types = new Map<string, "number" | "boolean">();
  if (!instanceofZodTypeObject(schema as never) || !schema.shape) return types;
  for (const [key, field] of Object.entries(schema.shape)) {
    if (!instanceofZodTypeCoercible(field as never)) continue;
    types.set(key, instanceofZodTypeKind(unwrapZodType(field as never, false), "boolean") ? "boolean" : "number");
  }
  return types;
}

/** A route that is not a tRPC procedure (the served documents), with its method, path and meta. */
export function documentRoute(path: string, document: NonNullable<RouteEntry["document"]>, meta: Meta): RouteEntry {
  return {
    method: "GET",
    path,
    segments: segmentsOf(path),
    pathParams: [],
    meta,
    typedQuery: new Map(),
    queryParams: [],
    document,
  };
}

/** Every REST operation declared in a router's `openapi` meta, in declaration order. */
export function collectRoutes(router: AnyRouter): RouteEntry[] {
  const routes: RouteEntry[] = [];
  forEachOpenApiProcedure(router._def.procedures, ({ path, procedure, meta }) => {
    const { openapi } = meta as Meta & { openapi: NonNullable<Meta["openapi"]> };
    const pathParams = getPathParameters(openapi.path);
    routes.push({
      method: openapi.method,
      path: openapi.path,
      segments: segmentsOf(openapi.path),
      pathParams,
      meta: meta as Meta,
      procedure: path,
      typedQuery: typedQueryKeys(procedure),
      queryParams: queryParamsOf(procedure, openapi.method, pathParams, meta as Meta),
      voidInput: instanceofZodTypeLikeVoid(inputSchemaOf(procedure)),
    });
  });
  return routes;
}

function bind(route: RouteEntry, segments: readonly string[]): Record<string, string> | null {
  if (route.segments.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const expected = route.segments[i] as Segment;
    const actual = segments[i] as string;
    if ("literal" in expected) {
      if (expected.literal !== actual) return null;
    } else {
      params[expected.param] = actual;
    }
  }
  return params;
}

/**
 * Resolves decoded path segments and a method against the routes. A literal segment wins over a parameter
 * (`/accounts/bulk` over `/accounts/{id}`).
 * @returns `{ route, params }` on a match; `{ allow }` (the methods the path supports) when only the method is wrong;
 *          `{}` when no operation has this path.
 */
export function matchRoute(
  routes: readonly RouteEntry[],
  method: string,
  segments: readonly string[],
): { route?: RouteEntry; params?: Record<string, string>; allow?: string[] } {
  const candidates = routes.flatMap((route) => {
    const params = bind(route, segments);
    return params ? [{ route, params }] : [];
  });
  if (candidates.length === 0) return {};
  const fewestParams = Math.min(...candidates.map((candidate) => candidate.route.pathParams.length));
  const preferred = candidates.filter((candidate) => candidate.route.pathParams.length === fewestParams);
  const match = preferred.find((candidate) => candidate.route.method === method);
  if (match) return match;
  return { allow: [...new Set(preferred.map((candidate) => candidate.route.method))] };
}
