import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { settingsRouter } from "../../../../server/settings/router";
import { settingsRequestFrom } from "../../../(settings)/_lib/session";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * The settings router's HTTP door (docs/architecture.md, "Settings: sign-in, team and roles"), kept on purpose for
 * scripts and the tests of answers over HTTP; the pages call the same procedures in-process. It has the pages' rules:
 * the session cookie, an `Origin` that is the public origin on every POST (as server actions and better-auth require;
 * a cross-site or origin-less POST is 403), and the same attempt limits (they live in the procedures). Refusals answer
 * with their status (401/403/404/422/429); an unexpected error is 500 and logged with the request id.
 */
function handler(req: Request): Promise<Response> | Response {
  const request = settingsRequestFrom(req.headers);
  if (req.method !== "GET" && req.headers.get("origin") !== request.origin) {
    return Response.json(
      { error: { message: "Cross-site request refused: send the Origin of the settings pages" } },
      { status: 403 },
    );
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: settingsRouter,
    createContext: () => ({ request }),
  });
}

export { handler as GET, handler as POST };
