import type { AnyRouter } from "@trpc/server";
import { forEachOpenApiProcedure, getPathParameters, getPathRegExp } from "trpc-to-openapi";
import type { Meta } from "../trpc";

/** One REST operation of a router: method, path template, its matcher and path parameter names, and its meta. */
export interface RouteEntry {
  method: string;
  path: string;
  pattern: RegExp;
  pathParams: string[];
  meta: Meta;
}

/** Every REST operation declared in a router's `openapi` meta, in declaration order. */
export function collectRoutes(router: AnyRouter): RouteEntry[] {
  const routes: RouteEntry[] = [];
  forEachOpenApiProcedure(router._def.procedures, ({ meta }) => {
    const { openapi } = meta as Meta & { openapi: NonNullable<Meta["openapi"]> };
    routes.push({
      method: openapi.method,
      path: openapi.path,
      pattern: getPathRegExp(openapi.path),
      pathParams: getPathParameters(openapi.path),
      meta: meta as Meta,
    });
  });
  return routes;
}

/**
 * Resolves a path (relative to `/api/v1`) and method against the routes.
 * @returns `{ route }` on a match; `{ allow }` (methods the path supports) when only the method is wrong;
 *          `{}` when no operation has this path.
 */
export function matchRoute(
  routes: readonly RouteEntry[],
  method: string,
  path: string,
): { route?: RouteEntry; allow?: string[] } {
  const candidates = routes.filter((route) => route.pattern.test(path));
  // A literal path such as /accounts/bulk wins over a template such as /accounts/{id}.
  const exact = candidates.filter((route) => route.pathParams.length === 0);
  const preferred = exact.length > 0 ? exact : candidates;
  const route = preferred.find((candidate) => candidate.method === method);
  if (route) return { route };
  if (candidates.length === 0) return {};
  return { allow: [...new Set(preferred.map((candidate) => candidate.method))] };
}
