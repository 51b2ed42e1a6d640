// The requests `npm start` hands to Next.js (settings pages, /docs, /api/inngest, /api/trpc), observed like the REST
// facade's: a request id, one log line, the request-duration metric and a server span, each under the page's route
// template (docs/architecture.md, "Observability").
import { existsSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { log } from "../observability/logger";
import { observeRequest } from "../observability/requests";
import { newRequestId } from "./envelope";

interface ManifestRoute {
  page: string;
  regex: string;
}

/** `/settings/webhooks/[id]` → `/settings/webhooks/{id}`; catch-all segments (`[...x]`, `[[...x]]`) become `{x}`. */
function template(page: string): string {
  return page.replace(/\[\[?(?:\.\.\.)?([^\]]+)\]\]?/g, "{$1}");
}

/**
 * The route template of a request path among the Next.js build's routes (`<distDir>/routes-manifest.json`): a static
 * route as it is, a dynamic one with its parameters in braces (`/settings/webhooks/{id}`), Next.js's own assets as
 * `/_next/static/{path}` and `/_next/{path}`. Null when nothing matches (an unknown path) or the build has no
 * manifest (development before the first compile), so a label never carries a raw path.
 * Source: docs/architecture.md, "Observability".
 */
export function pageRoutes(distDir: string): (pathname: string) => string | null {
  const file = path.join(distDir, "routes-manifest.json");
  const manifest = existsSync(file)
    ? (JSON.parse(readFileSync(file, "utf8")) as { staticRoutes?: ManifestRoute[]; dynamicRoutes?: ManifestRoute[] })
    : {};
  const routes = [...(manifest.staticRoutes ?? []), ...(manifest.dynamicRoutes ?? [])].map((route) => ({
    pattern: new RegExp(route.regex),
    template: template(route.page),
  }));
  return (pathname) => {
    if (pathname.startsWith("/_next/static/")) return "/_next/static/{path}";
    if (pathname.startsWith("/_next/")) return "/_next/{path}";
    return routes.find((route) => route.pattern.test(pathname))?.template ?? null;
  };
}

/**
 * Wraps the Next.js request handler of `npm start` so every request it serves gets an `X-Request-Id`
 * (`req_<24 hex>`, as API answers) and is observed by `observeRequest` under its route template
 * ({@link pageRoutes}): one log line when the response is finished (or the client went away), the
 * `http.server.request.duration` metric, and with tracing on a server span `<METHOD> <template>` with Next.js's own
 * spans and the database's inside it.
 * @param handle Next.js's request handler (`app.getRequestHandler()`).
 * @param routeOf see {@link pageRoutes}.
 * Source: docs/architecture.md, "Observability".
 */
export function observedPages(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  routeOf: (pathname: string) => string | null,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const requestId = newRequestId();
    res.setHeader("X-Request-Id", requestId);
    const observation = observeRequest(requestId, req.method ?? "GET", (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(", ") : value;
    });
    res.once("close", () =>
      observation.end({ route: routeOf((req.url ?? "/").split("?")[0] ?? "/"), status: res.statusCode }),
    );
    observation
      .run(() => handle(req, res))
      .catch((error: unknown) => {
        log().error({ requestId, err: error }, "page request failed");
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
  };
}
