// The requests `npm start` hands to Next.js (settings pages, /docs, /api/inngest, /api/trpc), observed like the REST
// facade's: a request id, one log line, the request-duration metric and a server span, each under the page's route
// template (docs/architecture.md, "Observability"); a server action posted from another origin is refused before
// Next.js (docs/architecture.md, "Settings: sign-in, team and roles").

import { hash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { warnThrottled } from "../kv/warn";
import { log } from "../observability/logger";
import { observeRequest } from "../observability/requests";
import { CLIENT_ADDRESS_HEADER } from "../platform/client-address";
import { enforceRateLimit } from "../platform/limits/rate-limits";
import { newRequestId } from "./envelope";
import { publicOrigin } from "./origin";

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

/**
 * Wraps the Next.js request handler of `npm start` so that a POST to a page (Next.js runs it as a server action) whose
 * `Origin` is not the request's public origin (`publicOrigin`: `PUBLIC_URL`, else the `Host`) is answered 403
 * (`text/plain`) without reaching Next.js, with one warn line per minute at most (`pages.cross-origin-action`). Next.js
 * refuses such a post itself, but as a 500 with an error line, so anyone could fill the error log. A POST without
 * `Origin` (no browser sends one) goes on to Next.js, as do `/api/…` route handlers, which check the origin themselves.
 * Source: docs/architecture.md, "Settings: sign-in, team and roles".
 */
export function sameOriginActions(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const read = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(", ") : value;
    };
    const origin = read("origin");
    const target = req.url ?? "/";
    if (req.method !== "POST" || origin === undefined || target.startsWith("/api/")) return handle(req, res);
    const expected = publicOrigin(read);
    if (origin === expected) return handle(req, res);
    warnThrottled("pages.cross-origin-action", {
      message: "server action from another origin refused (403)",
      origin: origin.slice(0, 100),
      expected,
      path: target.split("?")[0]?.slice(0, 200),
    });
    res.writeHead(403, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
    res.end("Forbidden: this form was posted from another site\n");
  };
}

// better-auth's session cookie, with the `__Secure-` prefix it takes over https.
const SESSION_COOKIE = /(?:^|;\s*)(?:__Secure-)?better-auth\.session_token=([^;]+)/;

/**
 * Wraps the Next.js request handler of `npm start` so that each visitor (a settings session, by a hash of its cookie,
 * else a client address) sends at most `RATE_LIMIT_PAGES_PER_MIN` requests a minute (default 300) to the pages, `/api/trpc` and
 * `/api/auth`, counted in the shared store like the API's windows; over it, 429 (`text/plain`, `Retry-After`) before
 * Next.js looks the session up. Next.js's immutable assets (`/_next/static/…`) and the Inngest worker's calls
 * (`/api/inngest`, signed) are not counted. Without it a member's script could hold the thread every other
 * organisation's requests share with refused exports and reloaded pages (docs/architecture.md, "Budgets: what one
 * request may cost").
 */
export function limitedPages(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const target = req.url ?? "/";
    if (target.startsWith("/_next/static/") || target.startsWith("/api/inngest")) return handle(req, res);
    const cookie = SESSION_COOKIE.exec(String(req.headers.cookie ?? ""))?.[1];
    const address = req.headers[CLIENT_ADDRESS_HEADER];
    const visitor = cookie
      ? `s:${hash("sha256", cookie, "base64url").slice(0, 22)}`
      : `ip:${String(address ?? "unknown").slice(0, 64)}`;
    const decision = await enforceRateLimit({ kind: "pages", visitor });
    if (decision.allowed) return handle(req, res);
    const seconds = String(decision.retryAfterSeconds ?? 1);
    res.writeHead(429, {
      "Content-Type": "text/plain; charset=utf-8",
      "Cache-Control": "no-store",
      "Retry-After": seconds,
    });
    res.end(`Too many requests: wait ${seconds} seconds and try again\n`);
  };
}
