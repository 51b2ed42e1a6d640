// Who is signed in to the settings and as which member of which organisation (docs/architecture.md,
// "Settings: sign-in, team and roles"): resolved from better-auth's session on every request, never from a cookie
// cache, so a removed member or a changed role takes effect on the member's next request.

import { prisma } from "../db/transaction";
import { ApiError } from "../errors";
import { recordSettingsAudit, type SettingsActor } from "./audit-trail/service";
import { authFor } from "./better-auth";
import { viaAuth } from "./better-auth-errors";
import { isRole, type Role } from "./roles";
import { isEnforced, type SsoMode } from "./sso/policy";

/** The request a settings action runs for: public origin, headers (the session cookie), client address, user agent. */
export interface SettingsRequest {
  /** Public origin (`PUBLIC_URL`, else the origin the request was sent to), e.g. `http://localhost:3000`. */
  origin: string;
  headers: Headers;
  /** Client address under `TRUST_PROXY`; null when unknown. */
  ip: string | null;
  userAgent: string | null;
  /** The request's id (`req_<24 hex>`, its `X-Request-Id`), for the log line of an unexpected error. */
  requestId?: string;
}

/** A signed-in member of the organisation the session acts on. */
export interface SignedInMember {
  request: SettingsRequest;
  session: {
    id: string;
    createdAt: Date;
    expiresAt: Date;
    reauthenticatedAt: Date | null;
    /** The second factor this session proved (`authenticator app`, `backup code`, `passkey`); null: a password only. */
    secondFactor: string | null;
  };
  user: { id: string; email: string; name: string; twoFactorEnabled: boolean; passkeys: number };
  org: { id: string; slug: string; name: string; requireTwoFactor: boolean };
  memberId: string;
  role: Role;
}

/** A signed-in user whose session names no organisation they are still a member of (removed, or never joined). */
export interface SignedInWithoutMembership {
  request: SettingsRequest;
  user: { id: string; email: string; name: string };
  /** The organisations the user is a member of, to switch to. */
  organisations: { id: string; slug: string; name: string }[];
  /**
   * Set when the user is a member, but the organisation requires single sign-on and this session did not come through
   * its identity provider (nor is it a break-glass owner's with a second factor): docs/api-contract.md §11.3.
   */
  ssoRequired?: { orgName: string };
}

/** The outcome of {@link resolveSettingsSession}. */
export type SettingsSessionState =
  | { state: "signed-out" }
  | ({ state: "no-membership" } & SignedInWithoutMembership)
  | ({ state: "member" } & SignedInMember);

/** How long a sign-in or a confirmed second factor lets a step-up action run: 15 minutes, in ms. */
export const STEP_UP_WINDOW_MS = 15 * 60 * 1000;

/** The session's "last seen" is stamped at most this often: 1 minute, in ms. */
const LAST_SEEN_RESOLUTION_MS = 60 * 1000;

/**
 * Thrown when an action needs a recent sign-in or second factor ({@link STEP_UP_WINDOW_MS}) and the session has
 * neither, or, for a change to the member's own sign-in factors, not with their strongest factor
 * ({@link mayChangeSignInFactors}); the pages send the user to `/settings/confirm` and back.
 */
export class StepUpRequiredError extends Error {
  constructor(
    message = "Confirm it's you first: this change needs a sign-in or a second factor within the last 15 minutes",
  ) {
    super(message);
  }
}

const MEMBERSHIP_SELECT = {
  id: true,
  role: true,
  breakGlass: true,
  org: {
    select: {
      id: true,
      slug: true,
      name: true,
      requireTwoFactor: true,
      ssoPolicy: { select: { mode: true, graceUntil: true, enforcementSuspendedAt: true } },
      ssoProvider: { select: { providerId: true } },
    },
  },
} as const;

/**
 * Whether the organisation's enforced `required` policy refuses this session (docs/api-contract.md §11.3): it did not
 * come through the organisation's identity provider, and is not a break-glass owner's that proved a second factor.
 */
function ssoRefusesSession(
  membership: {
    role: string;
    breakGlass: boolean;
    org: {
      ssoPolicy: { mode: string; graceUntil: Date | null; enforcementSuspendedAt: Date | null } | null;
      ssoProvider: { providerId: string } | null;
    };
  },
  session: object,
): boolean {
  const { ssoPolicy, ssoProvider } = membership.org;
  if (!ssoPolicy || !ssoProvider || !isEnforced({ ...ssoPolicy, mode: ssoPolicy.mode as SsoMode })) return false;
  const extra = session as { ssoProviderId?: string | null; secondFactor?: string | null };
  if (extra.ssoProviderId === ssoProvider.providerId) return false;
  return !(membership.breakGlass && membership.role === "owner" && extra.secondFactor);
}

/**
 * Resolves the request's session (better-auth, from the database every time) to its user and membership of the
 * session's active organisation, and stamps "last seen" (at most once a minute). A session without an active
 * organisation opens the user's first one.
 * @returns `signed-out`, `no-membership` (signed in, but not, or no longer, a member of the organisation) or `member`.
 */
export async function resolveSettingsSession(request: SettingsRequest): Promise<SettingsSessionState> {
  const found = await authFor(request.origin).api.getSession({ headers: request.headers });
  if (!found) return { state: "signed-out" };
  const { session, user } = found;
  const active = session.activeOrganizationId ?? null;
  const membership = active
    ? await prisma().member.findUnique({
        where: { orgId_userId: { orgId: active, userId: user.id } },
        select: MEMBERSHIP_SELECT,
      })
    : await prisma().member.findFirst({
        where: { userId: user.id },
        orderBy: { createdAt: "asc" },
        select: MEMBERSHIP_SELECT,
      });
  const refusedBySso = membership && (await ssoRefusesSession(membership, session));
  if (!membership || !isRole(membership.role) || refusedBySso) {
    const organisations = (await organisationsOf(user.id)).filter(
      (org) => !refusedBySso || org.id !== membership.org.id,
    );
    return {
      state: "no-membership",
      request,
      user: { id: user.id, email: user.email, name: user.name },
      organisations,
      ...(refusedBySso ? { ssoRequired: { orgName: membership.org.name } } : {}),
    };
  }
  const now = new Date();
  const lastSeenAt = (session as { lastSeenAt?: Date | null }).lastSeenAt ?? null;
  const [passkeys] = await Promise.all([
    prisma().passkey.count({ where: { userId: user.id } }),
    !active || !lastSeenAt || now.getTime() - new Date(lastSeenAt).getTime() >= LAST_SEEN_RESOLUTION_MS
      ? prisma().session.updateMany({
          where: { id: session.id },
          data: { lastSeenAt: now, ...(active ? {} : { activeOrgId: membership.org.id }) },
        })
      : null,
  ]);
  const extra = session as { reauthenticatedAt?: Date | null; secondFactor?: string | null };
  return {
    state: "member",
    request,
    session: {
      id: session.id,
      createdAt: new Date(session.createdAt),
      expiresAt: new Date(session.expiresAt),
      reauthenticatedAt: extra.reauthenticatedAt ? new Date(extra.reauthenticatedAt) : null,
      secondFactor: extra.secondFactor ?? null,
    },
    user: {
      id: user.id,
      email: user.email,
      name: user.name,
      twoFactorEnabled: Boolean((user as { twoFactorEnabled?: boolean | null }).twoFactorEnabled),
      passkeys,
    },
    org: {
      id: membership.org.id,
      slug: membership.org.slug,
      name: membership.org.name,
      requireTwoFactor: membership.org.requireTwoFactor,
    },
    memberId: membership.id,
    role: membership.role,
  };
}

/** The organisations a user is a member of, by name (the organisation switcher). */
export function organisationsOf(userId: string): Promise<{ id: string; slug: string; name: string }[]> {
  return prisma().organisation.findMany({
    where: { members: { some: { userId } } },
    select: { id: true, slug: true, name: true },
    orderBy: { name: "asc" },
  });
}

/** The actor of an audit entry for a signed-in member. */
export function actorOf(member: Pick<SignedInMember, "user" | "request">): SettingsActor {
  return {
    userId: member.user.id,
    email: member.user.email,
    ip: member.request.ip,
    userAgent: member.request.userAgent,
  };
}

/** Whether the member has a second factor: a confirmed authenticator app (TOTP) or at least one passkey. */
export function hasSecondFactor(member: SignedInMember): boolean {
  return member.user.twoFactorEnabled || member.user.passkeys > 0;
}

/**
 * What the organisation's "require two-factor for owners and admins" still asks of the member: `set-up` (an owner or
 * admin without an authenticator app or a passkey, whatever their session proved before they removed it), `confirm`
 * (one with a second factor whose session did not prove one: signed in with a password before adding it), or null.
 * Until then the member reaches only the security and confirmation pages and may change nothing.
 */
export function secondFactorNeeded(member: SignedInMember): "set-up" | "confirm" | null {
  if (!member.org.requireTwoFactor || (member.role !== "owner" && member.role !== "admin")) return null;
  if (!hasSecondFactor(member)) return "set-up";
  return member.session.secondFactor ? null : "confirm";
}

/** Whether {@link secondFactorNeeded} asks anything of the member. */
export function mustSetUpSecondFactor(member: SignedInMember): boolean {
  return secondFactorNeeded(member) !== null;
}

/**
 * Whether step-up actions may run: the session signed in, or was confirmed, within {@link STEP_UP_WINDOW_MS}, and
 * for a member with a second factor, that sign-in or confirmation used it (a password alone does not count then).
 */
export function isRecentlyAuthenticated(member: SignedInMember, now = Date.now()): boolean {
  const last = member.session.reauthenticatedAt?.getTime() ?? 0;
  if (now - last > STEP_UP_WINDOW_MS) return false;
  return !hasSecondFactor(member) || member.session.secondFactor !== null;
}

/**
 * The ways a member proves it's them, weakest first (docs/architecture.md, "Settings: sign-in, team and roles"): the
 * password; the authenticator app (a code, or one of its backup codes: both can be phished or copied); a passkey
 * (bound to this site's host name and, since every assertion must be user-verified, the device together with its
 * PIN or biometric).
 */
export const SIGN_IN_FACTORS = ["password", "authenticator app", "passkey"] as const;

/** One of {@link SIGN_IN_FACTORS}. */
export type SignInFactor = (typeof SIGN_IN_FACTORS)[number];

/** The strongest factor the member has ({@link SIGN_IN_FACTORS}): a passkey, else the authenticator app, else the password. */
export function strongestFactor(member: SignedInMember): SignInFactor {
  if (member.user.passkeys > 0) return "passkey";
  return member.user.twoFactorEnabled ? "authenticator app" : "password";
}

/** The factor a session's last sign-in or confirmation proved (`Session.secondFactor`; a backup code is the app's). */
function provenFactor(secondFactor: string | null): SignInFactor {
  if (secondFactor === "passkey") return "passkey";
  return secondFactor === "authenticator app" || secondFactor === "backup code" ? "authenticator app" : "password";
}

/**
 * Whether the member may change how they sign in now (add or remove an authenticator app or a passkey, make new backup
 * codes) or turn the organisation's two-factor requirement off: the session signed in or confirmed within
 * {@link STEP_UP_WINDOW_MS} with the member's strongest factor ({@link strongestFactor}), so neither a stolen session
 * nor a weaker factor can strip or replace a stronger one.
 */
export function mayChangeSignInFactors(member: SignedInMember, now = Date.now()): boolean {
  const last = member.session.reauthenticatedAt?.getTime() ?? 0;
  if (now - last > STEP_UP_WINDOW_MS) return false;
  const proven = SIGN_IN_FACTORS.indexOf(provenFactor(member.session.secondFactor));
  return proven >= SIGN_IN_FACTORS.indexOf(strongestFactor(member));
}

/** The refusal of a change that {@link mayChangeSignInFactors} does not allow yet, naming the factor to confirm with. */
export function factorStepUpRequired(member: SignedInMember): StepUpRequiredError {
  const how = {
    passkey: "with your passkey",
    "authenticator app": "with a code from your authenticator app",
    password: "with your password",
  }[strongestFactor(member)];
  return new StepUpRequiredError(
    `Confirm it's you ${how} first: changing how you sign in, or turning off the two-factor requirement, needs your strongest factor within the last 15 minutes`,
  );
}

/** How a member confirms it's them (step-up, two-factor completion): the page shows the matching form. */
export function confirmationMethod(member: SignedInMember): "code" | "passkey" | "password" {
  if (member.user.twoFactorEnabled) return "code";
  return member.user.passkeys > 0 ? "passkey" : "password";
}

/**
 * Confirms it is still the member (step-up): with their second factor when they have one (a code from the
 * authenticator app or a backup code; a member with only passkeys confirms with a passkey, which signs in anew), else
 * their password. Stamps the session fresh for 15 minutes and, after a code, as two-factor. Each try counts against
 * the attempt limit and a wrong one is in the audit trail (server/identity/better-auth-plugin.ts).
 * @throws ApiError `validation_error` (422) on `code` or `password` when it does not match or a password is offered
 *         where a passkey is needed; `rate_limited` (429) after too many attempts.
 */
export async function confirmIdentity(
  member: SignedInMember,
  input: { code?: string; password?: string; backup?: boolean },
): Promise<void> {
  const { api } = authFor(member.request.origin);
  const headers = member.request.headers;
  const method = confirmationMethod(member);
  let secondFactor: string | null = member.session.secondFactor;
  if (method === "code") {
    const code = (input.code ?? "").replace(/\s+/g, "");
    if (input.backup) await viaAuth(() => api.verifyBackupCode({ headers, body: { code } }));
    else await viaAuth(() => api.verifyTOTP({ headers, body: { code } }));
    secondFactor = input.backup ? "backup code" : "authenticator app";
  } else if (method === "passkey") {
    const message = "You have a passkey: confirm with it (a password alone is not enough)";
    throw new ApiError("validation_error", message, { details: [{ path: ["password"], message }] });
  } else {
    await viaAuth(() => api.verifyPassword({ headers, body: { password: input.password ?? "" } }));
  }
  await prisma().session.updateMany({
    where: { id: member.session.id },
    data: { reauthenticatedAt: new Date(), secondFactor },
  });
}

/** One signed-in browser of the user, as the security page lists it. */
export interface SessionView {
  id: string;
  /** The browser and system, from the user agent. */
  device: string;
  ipAddress: string | null;
  createdAt: Date;
  /** Last settings request, to the minute; the sign-in time until the first one. */
  lastSeenAt: Date;
  expiresAt: Date;
  current: boolean;
}

/** "Firefox on Linux" from a user agent; the raw text when it names neither. */
export function describeDevice(userAgent: string | null): string {
  if (!userAgent) return "Unknown device";
  const browser = /Edg\//.test(userAgent)
    ? "Edge"
    : /Firefox\//.test(userAgent)
      ? "Firefox"
      : /Chrome\/|Chromium\//.test(userAgent)
        ? /HeadlessChrome/.test(userAgent)
          ? "Headless Chrome"
          : "Chrome"
        : /Safari\//.test(userAgent)
          ? "Safari"
          : /curl\//.test(userAgent)
            ? "curl"
            : null;
  const system = /Windows/.test(userAgent)
    ? "Windows"
    : /Android/.test(userAgent)
      ? "Android"
      : /iPhone|iPad/.test(userAgent)
        ? "iOS"
        : /Mac OS X/.test(userAgent)
          ? "macOS"
          : /Linux/.test(userAgent)
            ? "Linux"
            : null;
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? userAgent.slice(0, 80);
}

/** The user's unexpired sessions, most recently seen first, marking the current one. */
export async function listSessions(member: SignedInMember): Promise<SessionView[]> {
  const rows = await prisma().session.findMany({
    where: { userId: member.user.id, expiresAt: { gt: new Date() } },
    select: { id: true, userAgent: true, ipAddress: true, createdAt: true, lastSeenAt: true, expiresAt: true },
  });
  return rows
    .map((row) => ({
      id: row.id,
      device: describeDevice(row.userAgent),
      ipAddress: row.ipAddress,
      createdAt: row.createdAt,
      // A session renewed from another (two-factor turned on) starts with that one's stamp.
      lastSeenAt: row.lastSeenAt && row.lastSeenAt > row.createdAt ? row.lastSeenAt : row.createdAt,
      expiresAt: row.expiresAt,
      current: row.id === member.session.id,
    }))
    .sort((a, b) => b.lastSeenAt.getTime() - a.lastSeenAt.getTime());
}

/**
 * Ends one of the user's sessions (on the server: its cookie no longer signs in anywhere) and records it.
 * @throws ApiError `not_found` (404) when the id is not a session of the user.
 */
export async function revokeSession(member: SignedInMember, sessionId: string): Promise<void> {
  const row = await prisma().session.findFirst({
    where: { id: sessionId, userId: member.user.id },
    select: { token: true, userAgent: true },
  });
  if (!row) throw new ApiError("not_found", "Session not found");
  await authFor(member.request.origin).api.revokeSession({
    headers: member.request.headers,
    body: { token: row.token },
  });
  await recordSettingsAudit(member.org.id, actorOf(member), {
    action: "session.revoked",
    target: `session on ${describeDevice(row.userAgent)}`,
  });
}

/** Signs the request's session out: the session row is deleted and the cookie cleared; recorded when a member. */
export async function signOut(request: SettingsRequest): Promise<void> {
  const state = await resolveSettingsSession(request);
  if (state.state === "member") await recordSettingsAudit(state.org.id, actorOf(state), { action: "signout" });
  if (state.state !== "signed-out") await authFor(request.origin).api.signOut({ headers: request.headers });
}

/**
 * Makes another of the user's organisations the one the session acts on.
 * @throws ApiError `not_found` (404) when the user is not a member of it.
 */
export async function switchOrganisation(request: SettingsRequest, orgId: string): Promise<void> {
  const found = await authFor(request.origin).api.getSession({ headers: request.headers });
  if (!found) throw new ApiError("unauthorized", "Sign in to use the settings");
  const member = await prisma().member.findUnique({ where: { orgId_userId: { orgId, userId: found.user.id } } });
  if (!member) throw new ApiError("not_found", "Organisation not found");
  await prisma().session.updateMany({ where: { id: found.session.id }, data: { activeOrgId: orgId } });
}

/**
 * Deletes settings sessions past their expiry (7 days from sign-in) and better-auth's one-time values past theirs
 * (password-reset tokens, two-factor and WebAuthn challenges): rows nobody can use any more, which better-auth only
 * removes when someone presents them (docs/architecture.md, "Settings: sign-in, team and roles").
 * @returns how many sessions and one-time values were deleted.
 */
export async function purgeExpiredSignIns(now = new Date()): Promise<{ sessions: number; verifications: number }> {
  const [sessions, verifications] = await Promise.all([
    prisma().session.deleteMany({ where: { expiresAt: { lte: now } } }),
    prisma().verification.deleteMany({ where: { expiresAt: { lte: now } } }),
  ]);
  return { sessions: sessions.count, verifications: verifications.count };
}
