import { toNextJsHandler } from "better-auth/next-js";
import { AUTH_BASE_PATH, authFor } from "../../../../server/identity/better-auth";
import {
  factorStepUpRequired,
  mayChangeSignInFactors,
  resolveSettingsSession,
} from "../../../../server/identity/session";
import { settingsRequestFrom } from "../../../(settings)/_lib/session";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

// The only better-auth endpoints a browser calls itself: WebAuthn needs the browser between the server's options and
// its verification, and single sign-on's identity provider sends the browser back to its callback (OIDC) or posts its
// answer to the ACS URL (SAML), whose SP metadata it reads. Every other sign-in, team and security action runs in our
// server actions, through the settings router's permission check and audit trail, so its HTTP endpoint is not served.
const BROWSER_PATHS = new Set([
  "/passkey/generate-register-options",
  "/passkey/verify-registration",
  "/passkey/generate-authenticate-options",
  "/passkey/verify-authentication",
]);

// Adding a passkey adds a way to sign in: like every change to the member's sign-in factors it needs a sign-in or a
// confirmation with their strongest factor within 15 minutes.
const STEP_UP_PATHS = new Set(["/passkey/generate-register-options", "/passkey/verify-registration"]);

// docs/api-contract.md §11.1: the URLs an identity provider is configured with.
const SSO_PATH = /^\/sso\/(callback\/[A-Za-z0-9_-]{1,100}|saml2\/sp\/acs\/[A-Za-z0-9_-]{1,100}|saml2\/sp\/metadata)$/;

function refuse(status: number, code: string, message: string): Response {
  return Response.json({ code, message }, { status, headers: { "Cache-Control": "no-store" } });
}

/**
 * better-auth's handler for the browser's passkey calls (`/api/auth/passkey/…`) and single sign-on's callback, ACS
 * and SP metadata (`/api/auth/sso/…`); anything else under it is 404.
 */
async function handler(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname.slice(AUTH_BASE_PATH.length);
  if (path.startsWith("/sign-up")) {
    return refuse(403, "INVITATION_REQUIRED", "Sign-up is by invitation: open the link an owner or admin sent you");
  }
  if (!BROWSER_PATHS.has(path) && !SSO_PATH.test(path)) return refuse(404, "NOT_FOUND", "Not found");
  const request = settingsRequestFrom(req.headers);
  if (STEP_UP_PATHS.has(path)) {
    const state = await resolveSettingsSession(request);
    if (state.state !== "member" || !mayChangeSignInFactors(state)) {
      const message =
        state.state === "member"
          ? factorStepUpRequired(state).message
          : "Confirm it's you first: adding a passkey needs a recent sign-in";
      return refuse(403, "STEP_UP_REQUIRED", message);
    }
  }
  return toNextJsHandler(authFor(request.origin)).POST(req);
}

export { handler as GET, handler as POST };
