// Email-first sign-in (docs/api-contract.md §11.4): `POST /api/sso/discover` tells the sign-in page whether an email
// signs in through its organisation's identity provider, and if so starts that sign-in.
import { z } from "zod";
import { prisma } from "../../db/transaction";
import { enforceRateLimit } from "../../platform/limits/rate-limits";
import { authFor } from "../better-auth";
import type { SettingsRequest } from "../session";
import { domainOf } from "./policy";

/** The request's body: the email typed on the sign-in page. */
export const DiscoverRequestSchema = z.object({ email: z.string().trim().max(320) });

/**
 * The answer, the same shape whether or not a provider exists: `method` `sso` (the browser goes to `redirectTo`, the
 * identity provider) or `password` (`redirectTo` null: the page asks for the password or passkey).
 */
export interface DiscoverAnswer {
  method: "sso" | "password";
  redirectTo: string | null;
}

/**
 * Whether `email`'s domain is a verified domain of an organisation whose single sign-on is on (optional or required)
 * with a provider connected; if so starts the sign-in through it (better-auth's state cookie in `setCookies`, for the
 * browser), back to `/settings`, refusals to `/signin?error=<code>`. Counted in the client address's anonymous window.
 * @returns the answer and the cookies to set; `limited` with the seconds to wait when the window is full.
 */
export async function discoverSignIn(
  request: SettingsRequest,
  email: string,
): Promise<{ answer: DiscoverAnswer; setCookies: string[] } | { limited: number }> {
  const decision = await enforceRateLimit({ kind: "anonymous", ip: request.ip ?? "unknown" });
  if (!decision.allowed) return { limited: decision.retryAfterSeconds ?? 1 };
  const password = { answer: { method: "password" as const, redirectTo: null }, setCookies: [] };
  const domain = domainOf(email);
  if (!domain || !email.includes("@")) return password;
  const claim = await prisma().ssoDomain.findFirst({
    where: {
      domain,
      verifiedAt: { not: null },
      org: { ssoPolicy: { mode: { in: ["optional", "required"] } }, ssoProvider: { isNot: null } },
    },
    select: { org: { select: { ssoProvider: { select: { providerId: true } } } } },
  });
  const providerId = claim?.org.ssoProvider?.providerId;
  if (!providerId) return password;
  const started = await authFor(request.origin).api.signInSSO({
    headers: request.headers,
    body: { providerId, callbackURL: "/settings", errorCallbackURL: "/signin", loginHint: email.trim() },
    returnHeaders: true,
  });
  const url = (started.response as { url?: string }).url;
  if (!url) return password;
  return { answer: { method: "sso", redirectTo: url }, setCookies: started.headers.getSetCookie() };
}
