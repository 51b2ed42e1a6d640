import { headers } from "next/headers";
import { forbidden, redirect } from "next/navigation";
import { cache } from "react";
import { env } from "../../../server/env";
import { newRequestId } from "../../../server/http/envelope";
import { clientAddress, publicOrigin } from "../../../server/http/origin";
import {
  resolveSettingsSession,
  type SettingsRequest,
  type SettingsSessionState,
} from "../../../server/identity/session";
import { CLIENT_ADDRESS_HEADER } from "../../../server/platform/client-address";
import { createSettingsCaller } from "../../../server/settings/router";

const REQUEST_ID = /^req_[0-9a-f]{24}$/;

/**
 * The settings request behind a set of headers: its public origin (`PUBLIC_URL`, else its `Host`, behind a trusted
 * proxy its forwarded host and protocol; server/http/origin.ts), the headers themselves (the session cookie), the
 * client address `npm start` put in {@link CLIENT_ADDRESS_HEADER} (on Vercel, Vercel's own header), the user agent,
 * and the request id `npm start` gave it (`X-Request-Id`; a new one elsewhere), which an error's log line names.
 */
export function settingsRequestFrom(list: Headers): SettingsRequest {
  const read = (name: string) => list.get(name) ?? undefined;
  const ip = env().TRUST_PROXY === "vercel" ? clientAddress(read, null) : (list.get(CLIENT_ADDRESS_HEADER) ?? null);
  const given = list.get("x-request-id");
  const requestId = given && REQUEST_ID.test(given) ? given : newRequestId();
  return { origin: publicOrigin(read), headers: new Headers(list), ip, userAgent: list.get("user-agent"), requestId };
}

/** The settings request of the current page or server action. */
export async function settingsRequest(): Promise<SettingsRequest> {
  return settingsRequestFrom(new Headers(await headers()));
}

/** The public origin of the current request. */
export async function requestOrigin(): Promise<string> {
  return (await settingsRequest()).origin;
}

/** Who is signed in to the current request, as which member; resolved once per page render. */
export const currentSettingsSession = cache(
  async (): Promise<SettingsSessionState> => resolveSettingsSession(await settingsRequest()),
);

/**
 * A server-side caller of the settings tRPC router acting for the current request. In a page render its procedures
 * share the render's one session resolution; in a server action (where React's cache does not apply) each call
 * resolves the session anew, so the action sees the member as they are now.
 */
export const settingsCaller = cache(async () =>
  createSettingsCaller({ request: await settingsRequest(), session: currentSettingsSession() }),
);

/** The signed-in member with what their role may do (the pages hide the rest); see `settingsRouter.me`. */
export type Me = Awaited<ReturnType<Awaited<ReturnType<typeof settingsCaller>>["me"]>>;

/** The pages an owner or admin reaches while their organisation's two-factor requirement is not met. */
const SECOND_FACTOR_PAGES = new Set(["/settings/security", "/settings/confirm"]);

/**
 * The signed-in member of the page at `path`: without a session, a redirect to `/signin?next=<path>`; signed in but
 * not (or no longer) a member of the organisation, the 403 page; an owner or admin whose organisation requires
 * two-factor and whose session did not prove one, a redirect to the security page (where they set one up, or go on to
 * confirm with it), which with the confirmation page is all they reach until then.
 */
export async function requireMember(path: string): Promise<Me> {
  const state = await currentSettingsSession();
  if (state.state === "signed-out") redirect(`/signin?next=${encodeURIComponent(path)}`);
  if (state.state === "no-membership") forbidden();
  const me = await (await settingsCaller()).me();
  if (me.mustSetUpSecondFactor && !SECOND_FACTOR_PAGES.has(path)) redirect("/settings/security?required=1");
  return me;
}

/** A same-site path to go to after sign-in: only local paths (`/settings…`, `/invite/…`), never another origin. */
export function safeNextPath(value: unknown): string {
  const path = typeof value === "string" ? value : "";
  return /^\/(?!\/)[\w\-./?=&%]*$/.test(path) && !path.includes("\\") ? path : "/settings";
}
