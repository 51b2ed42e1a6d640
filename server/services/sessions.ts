import { createHash, randomBytes } from "node:crypto";
import { prisma } from "../db/transaction";

/** Name of the settings-UI session cookie. */
export const SESSION_COOKIE = "msp_session";

/** Session lifetime from sign-in: 7 days (604,800,000 ms), not extended by use; signing in again starts a new one. */
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The signed-in settings user behind a session cookie, with the one organisation they belong to (DESIGN.md §7). */
export interface SessionPrincipal {
  /** SHA-256 hex of the cookie's token: the `Session.id`. */
  sessionId: string;
  userId: string;
  email: string;
  name: string | null;
  orgId: string;
  orgName: string;
  orgSlug: string;
  expiresAt: Date;
}

// 32 random bytes in base64url: 43 characters, 256 bits.
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** SHA-256 hex of a session token: what the database stores, so a leaked table gives no usable cookie. */
export function hashSessionToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * Starts a session for a user: a random 256-bit token for the cookie, its SHA-256 stored as `Session.id`, expiring
 * {@link SESSION_TTL_MS} from now. The user's expired sessions are removed on the way.
 * @returns `{ token, expiresAt }`; the token is never stored.
 */
export async function createSession(userId: string): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await prisma().session.deleteMany({ where: { userId, expiresAt: { lte: new Date() } } });
  await prisma().session.create({ data: { id: hashSessionToken(token), userId, expiresAt } });
  return { token, expiresAt };
}

/**
 * Resolves a session cookie's token to its user and organisation.
 * @returns null for a missing, malformed, unknown or expired token (an expired session row is deleted).
 */
export async function resolveSession(token: string | null | undefined): Promise<SessionPrincipal | null> {
  if (!token || !TOKEN_PATTERN.test(token)) return null;
  const sessionId = hashSessionToken(token);
  const session = await prisma().session.findUnique({
    where: { id: sessionId },
    select: {
      expiresAt: true,
      user: {
        select: { id: true, email: true, name: true, org: { select: { id: true, name: true, slug: true } } },
      },
    },
  });
  if (!session) return null;
  if (session.expiresAt.getTime() <= Date.now()) {
    await prisma().session.deleteMany({ where: { id: sessionId } });
    return null;
  }
  const { user } = session;
  return {
    sessionId,
    userId: user.id,
    email: user.email,
    name: user.name,
    orgId: user.org.id,
    orgName: user.org.name,
    orgSlug: user.org.slug,
    expiresAt: session.expiresAt,
  };
}

/** Ends the session of a token (sign-out); a token with no session is ignored. */
export async function endSession(token: string | null | undefined): Promise<void> {
  if (!token || !TOKEN_PATTERN.test(token)) return;
  await prisma().session.deleteMany({ where: { id: hashSessionToken(token) } });
}

/**
 * Attributes of the session cookie: HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site POSTs),
 * Secure when the site is served over https, path `/`, expiring with the session.
 */
export function sessionCookieOptions(expiresAt: Date, secure: boolean) {
  return { httpOnly: true, sameSite: "lax", secure, path: "/", expires: expiresAt } as const;
}

/** The value of cookie `name` in a `Cookie` request header, or null. */
export function readCookie(header: string | null, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const index = part.indexOf("=");
    if (index > 0 && part.slice(0, index).trim() === name) return decodeURIComponent(part.slice(index + 1).trim());
  }
  return null;
}
