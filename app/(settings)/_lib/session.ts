import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { publicOrigin } from "../../../server/http/origin";
import { createSettingsCaller } from "../../../server/routers/settings";
import {
  resolveSession,
  SESSION_COOKIE,
  type SessionPrincipal,
  sessionCookieOptions,
} from "../../../server/services/sessions";

/** The session cookie's token of the current request, or null. */
export async function sessionToken(): Promise<string | null> {
  return (await cookies()).get(SESSION_COOKIE)?.value ?? null;
}

/** The signed-in user of the current request, or null; resolved once per request. */
export const currentSession = cache(async (): Promise<SessionPrincipal | null> => resolveSession(await sessionToken()));

/** The signed-in user; redirects to `/signin?next=<path>` when there is none. */
export async function requireSession(path = "/settings"): Promise<SessionPrincipal> {
  const session = await currentSession();
  if (!session) redirect(`/signin?next=${encodeURIComponent(path)}`);
  return session;
}

/** A server-side caller of the settings tRPC router acting as the current request's session (DESIGN.md §1). */
export async function settingsCaller() {
  return createSettingsCaller({ sessionToken: await sessionToken() });
}

/**
 * The public origin of the current request (`PUBLIC_URL`, else its `Host`, behind a trusted proxy its forwarded host
 * and protocol; server/http/origin.ts).
 */
export async function requestOrigin(): Promise<string> {
  const list = await headers();
  return publicOrigin((name) => list.get(name) ?? undefined);
}

/** Sets the session cookie (server actions only): HttpOnly, SameSite=Lax, Secure when the public origin is https. */
export async function setSessionCookie(token: string, expiresAt: Date): Promise<void> {
  const secure = (await requestOrigin()).startsWith("https:");
  (await cookies()).set(SESSION_COOKIE, token, sessionCookieOptions(expiresAt, secure));
}

/** Removes the session cookie (server actions only). */
export async function clearSessionCookie(): Promise<void> {
  (await cookies()).delete(SESSION_COOKIE);
}

/** A same-site path to go to after sign-in: only local paths (`/settings…`), never another origin. */
export function safeNextPath(value: unknown): string {
  const path = typeof value === "string" ? value : "";
  return /^\/(?!\/)[\w\-./?=&%]*$/.test(path) && !path.includes("\\") ? path : "/settings";
}
