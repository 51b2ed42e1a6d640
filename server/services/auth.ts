// The settings' sign-in, sessions, organisations, two-factor and passkeys on better-auth (docs/architecture.md,
// "Settings: sign-in, team and roles"): one instance per public origin, on our Prisma client (PostgreSQL and the
// embedded database alike), its rate limits in our key-value store, every sign-in outcome in the settings audit trail.
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { passkey } from "@better-auth/passkey";
import { type BetterAuthPlugin, betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { APIError, createAuthMiddleware } from "better-auth/api";
import { nextCookies } from "better-auth/next-js";
import { organization, twoFactor } from "better-auth/plugins";
import { CLIENT_ADDRESS_HEADER, canonicalAddress } from "../auth/client-address";
import {
  hashPassword,
  isLegacyPasswordHash,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  verifyPassword,
} from "../auth/passwords";
import { accessControl, roles } from "../auth/roles";
import { authSecret } from "../auth/secret";
import { db } from "../db/client";
import type { PrismaClient } from "../db/generated/client";
import { prisma, transaction } from "../db/transaction";
import { env } from "../env";
import { kv } from "../kv";
import { warnThrottled } from "../kv/warn";
import { recordSettingsAuditForUser } from "./settings-audit";

/** Where better-auth's HTTP endpoints are mounted (`app/api/auth/[...all]/route.ts`). */
export const AUTH_BASE_PATH = "/api/auth";

/** A session lasts 7 days from sign-in (604,800 s) and is not extended by use; signing in again starts a new one. */
export const SESSION_TTL_SECONDS = 7 * 24 * 60 * 60;

/** Invitations expire 7 days (604,800 s) after they are sent; resending makes a new link with a new 7 days. */
export const INVITATION_TTL_SECONDS = 7 * 24 * 60 * 60;

/** A password-reset link works once, for 1 hour (3,600 s). */
export const PASSWORD_RESET_TTL_SECONDS = 60 * 60;

/** Sign-in attempts allowed per email and per client address in {@link SIGN_IN_WINDOW_MS}, across instances. */
export const SIGN_IN_LIMITS = { perEmail: 10, perAddress: 50 } as const;

/** The window of {@link SIGN_IN_LIMITS}: 15 minutes, in ms. */
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;

/** Paths whose outcome is a sign-in: a password, a second factor, a backup code or a passkey. */
const SIGN_IN_PATHS: Record<string, string> = {
  "/sign-in/email": "password",
  "/two-factor/verify-totp": "password + authenticator code",
  "/two-factor/verify-backup-code": "password + backup code",
  "/passkey/verify-authentication": "passkey",
};

// The Prisma client better-auth queries through: always the current one (`prisma()`), so its writes join the
// enclosing transaction when a service runs it inside one, and its own transactions join that transaction too.
const client = new Proxy({} as PrismaClient, {
  get(_target, property) {
    if (property === "$transaction") {
      return (work: unknown, options?: unknown) =>
        typeof work === "function"
          ? transaction(() => (work as (tx: PrismaClient) => Promise<unknown>)(prisma()))
          : db().prisma.$transaction(work as never, options as never);
    }
    const current = prisma();
    const value = Reflect.get(current, property);
    return typeof value === "function" ? value.bind(current) : value;
  },
});

/** What {@link capturePasswordResetToken} collects while better-auth "sends" a reset link. */
const resetCapture = new AsyncLocalStorage<{ token?: string }>();

/**
 * Runs `work` (a `requestPasswordReset` call) and returns the reset token better-auth issued inside it, instead of
 * mailing it: how `npm run admin -- reset-password` prints a one-time link.
 */
export async function capturePasswordResetToken(work: () => Promise<unknown>): Promise<string | undefined> {
  const box: { token?: string } = {};
  await resetCapture.run(box, work);
  return box.token;
}

function hashed(value: string): string {
  return createHash("sha256").update(value).digest("hex").slice(0, 32);
}

// Counts a sign-in attempt per email and per address in the shared store; an unreachable store admits the attempt
// (scrypt's cost still slows guessing) rather than locking everyone out.
async function signInAllowed(email: string | null, address: string | null): Promise<boolean> {
  const windows = [
    ...(email ? [{ key: `signin:{e:${hashed(email.trim().toLowerCase())}}`, limit: SIGN_IN_LIMITS.perEmail }] : []),
    ...(address ? [{ key: `signin:{a:${address.slice(0, 64)}}`, limit: SIGN_IN_LIMITS.perAddress }] : []),
  ];
  if (windows.length === 0) return true;
  try {
    // One call per window: the keys' hash tags differ, so one script cannot span them on a cluster.
    const results = await Promise.all(windows.map((window) => kv().slidingWindow([window], SIGN_IN_WINDOW_MS)));
    return results.every((result) => result.allowed);
  } catch (error) {
    warnThrottled("signin.store-down", {
      message: "sign-in limit store unreachable; attempt admitted",
      error: String(error),
    });
    return true;
  }
}

function clientAddressOf(headers: Headers | undefined): string | null {
  const header = env().TRUST_PROXY === "vercel" ? "x-vercel-forwarded-for" : CLIENT_ADDRESS_HEADER;
  return canonicalAddress(headers?.get(header)?.split(",")[0]);
}

async function userIdForEmail(email: unknown): Promise<{ id: string; email: string } | null> {
  if (typeof email !== "string" || email.length > 320 || email.includes("\u0000")) return null;
  return prisma().user.findUnique({ where: { email: email.trim().toLowerCase() }, select: { id: true, email: true } });
}

interface HookContext {
  path: string;
  body?: Record<string, unknown>;
  getSignedCookie: (name: string, secret: string) => Promise<string | null | false>;
  context: {
    secret: string;
    createAuthCookie: (name: string) => { name: string };
    internalAdapter: { findVerificationValue: (identifier: string) => Promise<{ value: string } | null> };
  };
}

/**
 * The user a sign-in attempt is for, when it is a sign-in at all: the typed email's user for a password; the user of
 * the signed two-factor challenge cookie for a code (without one, a code confirms a signed-in session: no sign-in);
 * the passkey's owner for a passkey.
 */
async function signInAttempt(
  ctx: HookContext,
): Promise<{ signIn: boolean; user: { id: string; email: string } | null }> {
  if (ctx.path === "/sign-in/email") return { signIn: true, user: await userIdForEmail(ctx.body?.email) };
  let userId: string | undefined;
  if (ctx.path.startsWith("/two-factor/")) {
    const identifier = await ctx.getSignedCookie(ctx.context.createAuthCookie("two_factor").name, ctx.context.secret);
    if (!identifier) return { signIn: false, user: null };
    userId = (await ctx.context.internalAdapter.findVerificationValue(identifier))?.value;
  } else {
    const credentialID = (ctx.body?.response as { id?: unknown } | undefined)?.id;
    if (typeof credentialID === "string" && credentialID.length <= 1024) {
      userId = (await prisma().passkey.findFirst({ where: { credentialID }, select: { userId: true } }))?.userId;
    }
  }
  const user = userId
    ? await prisma().user.findUnique({ where: { id: userId }, select: { id: true, email: true } })
    : null;
  return { signIn: true, user };
}

/**
 * Our better-auth plugin, after two-factor and passkey so it sees their outcome: limits sign-in attempts per email
 * and per address, refuses sign-up without a pending invitation, and writes each sign-in (or failed one) and each
 * passkey registration to the settings audit trail of the user's organisations.
 */
function settingsPlugin(): BetterAuthPlugin {
  return {
    id: "crm-settings",
    hooks: {
      before: [
        {
          matcher: (ctx: { path?: string }) =>
            Boolean(ctx.path && (ctx.path in SIGN_IN_PATHS || ctx.path === "/verify-password")),
          handler: createAuthMiddleware(async (ctx) => {
            const email = ctx.path === "/sign-in/email" && typeof ctx.body?.email === "string" ? ctx.body.email : null;
            if (await signInAllowed(email, clientAddressOf(ctx.headers))) return;
            const user = email ? await userIdForEmail(email) : null;
            await recordSettingsAuditForUser(user?.id ?? null, {
              actorEmail: user?.email ?? email ?? "unknown",
              action: "signin.failed",
              details: { method: SIGN_IN_PATHS[ctx.path] ?? "password confirmation", reason: "too many attempts" },
              ip: clientAddressOf(ctx.headers),
              userAgent: ctx.headers?.get("user-agent") ?? null,
            });
            throw new APIError("TOO_MANY_REQUESTS", {
              message: "Too many sign-in attempts: wait 15 minutes and try again",
              code: "TOO_MANY_SIGN_IN_ATTEMPTS",
            });
          }),
        },
        {
          matcher: (ctx: { path?: string }) => ctx.path === "/sign-up/email",
          handler: createAuthMiddleware(async (ctx) => {
            const email = typeof ctx.body?.email === "string" ? ctx.body.email.trim().toLowerCase() : "";
            const pending = await prisma().invitation.count({
              where: { email, status: "pending", expiresAt: { gt: new Date() } },
            });
            if (pending === 0) {
              throw new APIError("FORBIDDEN", {
                message: "Sign-up needs an invitation: ask an owner or admin of your organisation to invite you",
                code: "INVITATION_REQUIRED",
              });
            }
          }),
        },
      ],
      after: [
        {
          matcher: (ctx: { path?: string }) =>
            Boolean(ctx.path && (ctx.path in SIGN_IN_PATHS || ctx.path === "/passkey/verify-registration")),
          handler: createAuthMiddleware(async (ctx) => {
            const returned = ctx.context.returned;
            const failed = returned instanceof APIError;
            const ip = clientAddressOf(ctx.headers);
            const userAgent = ctx.headers?.get("user-agent") ?? null;
            if (ctx.path === "/passkey/verify-registration") {
              const session = ctx.context.session;
              if (!failed && session) {
                await recordSettingsAuditForUser(session.user.id, {
                  actorEmail: session.user.email,
                  action: "passkey.added",
                  target: `passkey ${(returned as { name?: string } | null)?.name ?? ""}`.trim(),
                  ip,
                  userAgent,
                });
              }
              return;
            }
            const method = SIGN_IN_PATHS[ctx.path] ?? null;
            const session = ctx.context.newSession;
            // A code from a signed-in session enrols an app or confirms a step-up: not a sign-in.
            const attempt = await signInAttempt(ctx);
            if (!attempt.signIn) return;
            if (session) {
              await recordSettingsAuditForUser(session.user.id, {
                actorEmail: session.user.email,
                action: "signin.succeeded",
                details: { method },
                ip,
                userAgent,
              });
              return;
            }
            if (!failed) return; // a password accepted, the second factor still to come
            const typed = typeof ctx.body?.email === "string" ? ctx.body.email.slice(0, 320) : "unknown";
            await recordSettingsAuditForUser(attempt.user?.id ?? null, {
              actorEmail: attempt.user?.email ?? typed,
              action: "signin.failed",
              details: { method, reason: (returned as APIError).message },
              ip,
              userAgent,
            });
          }),
        },
      ],
    },
  };
}

function createAuth(origin: string) {
  const secure = origin.startsWith("https:");
  return betterAuth({
    appName: "MSP CRM",
    baseURL: origin,
    basePath: AUTH_BASE_PATH,
    secret: authSecret(),
    trustedOrigins: [origin],
    database: prismaAdapter(client, { provider: "postgresql", transaction: true }),
    telemetry: { enabled: false },
    // Failed sign-ins are in the settings audit trail; the log keeps better-auth's errors only.
    logger: { level: "error" },
    emailAndPassword: {
      enabled: true,
      minPasswordLength: PASSWORD_MIN_LENGTH,
      maxPasswordLength: PASSWORD_MAX_LENGTH,
      autoSignIn: true,
      revokeSessionsOnPasswordReset: true,
      resetPasswordTokenExpiresIn: PASSWORD_RESET_TTL_SECONDS,
      password: {
        hash: hashPassword,
        verify: async ({ hash, password }) => {
          const matches = await verifyPassword(hash, password);
          // A bcrypt hash from before better-auth is replaced by scrypt once its password is known to be right.
          if (matches && isLegacyPasswordHash(hash)) {
            await prisma().authAccount.updateMany({
              where: { providerId: "credential", password: hash },
              data: { password: await hashPassword(password) },
            });
          }
          return matches;
        },
      },
      sendResetPassword: async ({ token }) => {
        const box = resetCapture.getStore();
        if (box) box.token = token;
      },
    },
    account: { modelName: "authAccount" },
    session: {
      expiresIn: SESSION_TTL_SECONDS,
      disableSessionRefresh: true,
      // Freshness is ours (step-up, 15 minutes, settings-session.ts), not better-auth's createdAt-only check.
      freshAge: 0,
      additionalFields: {
        lastSeenAt: { type: "date", required: false, input: false },
        reauthenticatedAt: { type: "date", required: false, input: false },
      },
    },
    databaseHooks: {
      session: {
        create: {
          // A new session opens on the user's first organisation (the one they joined first), and keeps the address
          // the audit trail records: better-auth's own is its rate-limit key, IPv6 cut to the /64 (`::1` stored as
          // `0000:…:0000`).
          before: async (session, context) => {
            const ipAddress =
              clientAddressOf(context?.headers ?? context?.request?.headers) ?? canonicalAddress(session.ipAddress);
            if (session.activeOrganizationId) return { data: { ...session, ipAddress } };
            const first = await prisma().member.findFirst({
              where: { userId: session.userId },
              orderBy: { createdAt: "asc" },
              select: { orgId: true },
            });
            return { data: { ...session, ipAddress, activeOrganizationId: first?.orgId ?? null } };
          },
        },
      },
    },
    rateLimit: {
      enabled: true,
      window: 60,
      max: 60,
      customStorage: {
        consume: async (key, rule) => {
          try {
            const result = await kv().slidingWindow(
              [{ key: `auth-rl:{${hashed(key)}}`, limit: rule.max }],
              rule.window * 1000,
            );
            const freeAt = Math.max(...result.windows.map((window) => window.freeAtMs));
            return {
              allowed: result.allowed,
              retryAfter: result.allowed ? null : Math.max(1, Math.ceil((freeAt - result.nowMs) / 1000)),
            };
          } catch (error) {
            warnThrottled("auth-rate-limit.store-down", {
              message: "auth rate-limit store unreachable",
              error: String(error),
            });
            return { allowed: true, retryAfter: null };
          }
        },
      },
    },
    advanced: {
      cookiePrefix: "msp",
      useSecureCookies: secure,
      // better-auth skips the origin check under NODE_ENV=test; the tests check it as production runs it.
      disableOriginCheck: false,
      ipAddress: {
        ipAddressHeaders: [env().TRUST_PROXY === "vercel" ? "x-vercel-forwarded-for" : CLIENT_ADDRESS_HEADER],
      },
    },
    plugins: [
      organization({
        ac: accessControl,
        roles,
        creatorRole: "owner",
        allowUserToCreateOrganization: false,
        invitationExpiresIn: INVITATION_TTL_SECONDS,
        cancelPendingInvitationsOnReInvite: true,
        schema: {
          session: { fields: { activeOrganizationId: "activeOrgId" } },
          organization: { modelName: "organisation" },
          member: { fields: { organizationId: "orgId" } },
          invitation: { fields: { organizationId: "orgId" } },
        },
      }),
      twoFactor({ issuer: "MSP CRM", backupCodeOptions: { amount: 10 } }),
      passkey({ rpID: new URL(origin).hostname, rpName: "MSP CRM settings", origin }),
      settingsPlugin(),
      nextCookies(),
    ],
  });
}

/** A better-auth instance for one public origin. */
export type Auth = ReturnType<typeof createAuth>;

// One instance per public origin: cookies are Secure exactly when the origin is https, passkeys are bound to its host
// name, and only it is a trusted origin. Bounded, since the origin comes from the Host header (validated upstream).
const MAX_INSTANCES = 16;
const holder = globalThis as unknown as { __crmAuth?: Map<string, Auth> };

/**
 * The better-auth instance serving `origin` (`PUBLIC_URL`, else the origin a request was sent to, e.g.
 * `http://localhost:3000`), created on first use.
 * @throws Error from {@link authSecret} when production has no `BETTER_AUTH_SECRET`.
 */
export function authFor(origin: string): Auth {
  holder.__crmAuth ??= new Map();
  const existing = holder.__crmAuth.get(origin);
  if (existing) return existing;
  if (holder.__crmAuth.size >= MAX_INSTANCES) {
    const oldest = holder.__crmAuth.keys().next().value;
    if (oldest !== undefined) holder.__crmAuth.delete(oldest);
  }
  const created = createAuth(origin);
  holder.__crmAuth.set(origin, created);
  return created;
}

/** The origin commands (`npm run admin`) and start-up use: `PUBLIC_URL`, else `http://localhost:<PORT>`. */
export function defaultOrigin(): string {
  const config = env();
  return config.PUBLIC_URL?.replace(/\/+$/, "") ?? `http://localhost:${config.PORT}`;
}

/** Whether `error` is a better-auth API error (wrong password, refused invitation, …). */
export function isAuthError(error: unknown): error is APIError {
  return error instanceof APIError;
}
