import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { settingsRouter } from "../../../../server/routers/settings";
import { settingsRequestFrom } from "../../../(settings)/_lib/session";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

// Cookie-authenticated mutations must come from our own pages: a cross-site POST (CSRF) is refused even where a
// browser would send the SameSite=Lax cookie.
function crossSite(req: Request): boolean {
  const origin = req.headers.get("origin");
  if (!origin || req.method === "GET") return false;
  const host = req.headers.get("x-forwarded-host") ?? req.headers.get("host");
  try {
    return new URL(origin).host !== host;
  } catch {
    return true;
  }
}

/** The settings UI's tRPC door: `settingsRouter` over HTTP, authenticated by the session cookie. */
function handler(req: Request): Promise<Response> | Response {
  if (crossSite(req)) {
    return Response.json({ error: { message: "Cross-site request refused" } }, { status: 403 });
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: settingsRouter,
    createContext: () => ({ request: settingsRequestFrom(req.headers) }),
  });
}

export { handler as GET, handler as POST };
