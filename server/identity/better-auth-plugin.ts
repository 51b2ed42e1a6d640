// Our better-auth plugin (docs/architecture.md, "Settings: sign-in, team and roles"), placed after the two-factor and
// passkey plugins so it sees their outcome: every password or code check is limited (auth-attempts.ts) and, when it
// fails, recorded with its method; a password sign-in of a user with a passkey asks for the passkey; a TOTP code is
// accepted once; passkey sign-in asks the browser to verify the user; each sign-in, failed sign-in and passkey
// registration is in the settings audit trail; sign-up needs a pending invitation.

import { base32 } from "@better-auth/utils/base32";
import { createOTP } from "@better-auth/utils/otp";
import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware, getSessionFromCtx } from "better-auth/api";
import { deleteSessionCookie } from "better-auth/cookies";
import { symmetricDecrypt } from "better-auth/crypto";
import { prisma } from "../db/transaction";
import { clientAddressOf } from "../platform/client-address";
import { enforceRateLimit } from "../platform/limits/rate-limits";
import { countAttempt } from "./attempts";
import { recordSettingsAudit, recordSettingsAuditForUser } from "./audit-trail/service";
import { authRefusalStatus } from "./better-auth-errors";
import { issueRegistrationToken } from "./oauth/registrations";
import { assertMayResetPassword, assertMaySignUp } from "./sso/enforcement";
import { SSO_SIGN_IN_PATHS } from "./sso/plugin";
import { requiredMembershipsOf } from "./sso/policy";
import { flushSsoSignInRecords, markConnectionTest } from "./sso/sign-in";

/** What each checked path verifies and what for, in the audit trail's words. */
const CHECKS: Record<string, { method: string; purpose: string }> = {
  "/sign-in/email": { method: "password", purpose: "sign-in" },
  "/two-factor/verify-totp": { method: "authenticator code", purpose: "step-up" },
  "/two-factor/verify-backup-code": { method: "backup code", purpose: "step-up" },
  "/passkey/verify-authentication": { method: "passkey", purpose: "sign-in" },
  "/verify-password": { method: "password", purpose: "step-up" },
  "/two-factor/enable": { method: "password", purpose: "authenticator app set-up" },
  "/two-factor/disable": { method: "password", purpose: "authenticator app removal" },
  "/two-factor/generate-backup-codes": { method: "password", purpose: "new backup codes" },
  "/change-password": { method: "password", purpose: "password change" },
};

/** The second factor a session made on each path proved (Session.secondFactor). */
export const SECOND_FACTOR_OF_PATH: Record<string, string> = {
  "/two-factor/verify-totp": "authenticator app",
  "/two-factor/verify-backup-code": "backup code",
  "/passkey/verify-authentication": "passkey",
};

/**
 * Paths whose new session is a sign-in (fresh for step-up) when the request had none; a session a path makes to replace
 * the request's own (turning the authenticator app on with its first code, or off) is that session still
 * (server/identity/better-auth.ts).
 */
export const SIGN_IN_PATHS = new Set([
  "/sign-in/email",
  "/sign-up/email",
  "/two-factor/verify-totp",
  "/two-factor/verify-backup-code",
  "/passkey/verify-authentication",
]);

interface Person {
  id: string;
  email: string;
}

async function userForEmail(email: unknown): Promise<Person | null> {
  if (typeof email !== "string" || email.length > 320 || email.includes("\u0000")) return null;
  return prisma().user.findUnique({ where: { email: email.trim().toLowerCase() }, select: { id: true, email: true } });
}

async function userById(id: string | undefined | null): Promise<Person | null> {
  return id ? prisma().user.findUnique({ where: { id }, select: { id: true, email: true } }) : null;
}

type HookContext = Parameters<Parameters<typeof createAuthMiddleware>[0]>[0];

/** One checked call: whose, from where, and whether it is (part of) a sign-in or a signed-in user's check. */
interface Attempt {
  signIn: boolean;
  user: Person | null;
  /** The email typed at sign-in (also when no user has it). */
  email: string | null;
  address: string | null;
  method: string;
  purpose: string;
}

// The attempt of a call, worked out once in its before hook: after a successful second step the challenge it names is
// gone.
const attempts = new WeakMap<object, Attempt>();

async function attemptOf(ctx: HookContext): Promise<Attempt> {
  const known = attempts.get(ctx.context);
  if (known) return known;
  const check = CHECKS[ctx.path] ?? { method: "password", purpose: "step-up" };
  const base = { address: clientAddressOf(ctx.headers), method: check.method, purpose: check.purpose };
  let attempt: Attempt;
  if (ctx.path === "/sign-in/email") {
    const email = typeof ctx.body?.email === "string" ? ctx.body.email.slice(0, 320) : null;
    attempt = { ...base, signIn: true, user: await userForEmail(email), email };
  } else if (ctx.path === "/passkey/verify-authentication") {
    const credentialID = (ctx.body?.response as { id?: unknown } | undefined)?.id;
    const owner =
      typeof credentialID === "string" && credentialID.length <= 1024
        ? await prisma().passkey.findFirst({ where: { credentialID }, select: { userId: true } })
        : null;
    const user = await userById(owner?.userId);
    // The passkey itself is no guess: only the address counts it.
    attempt = { ...base, signIn: true, user, email: null };
  } else {
    const session = await getSessionFromCtx(ctx).catch(() => null);
    if (session) {
      const user = { id: session.user.id, email: session.user.email };
      const purpose =
        ctx.path === "/two-factor/verify-totp" && !session.user.twoFactorEnabled
          ? "authenticator app set-up"
          : base.purpose;
      attempt = { ...base, purpose, signIn: false, user, email: user.email };
    } else {
      // The second step of a sign-in: the user of the signed two-factor challenge cookie.
      const cookie = ctx.context.createAuthCookie("two_factor").name;
      const identifier = await ctx.getSignedCookie(cookie, ctx.context.secret);
      const challenge = identifier ? await ctx.context.internalAdapter.findVerificationValue(identifier) : null;
      const user = await userById(challenge?.value);
      const method = `password + ${base.method}`;
      attempt = { ...base, method, purpose: "sign-in", signIn: true, user, email: user?.email ?? null };
    }
  }
  attempts.set(ctx.context, attempt);
  return attempt;
}

function record(attempt: Attempt, ctx: HookContext, reason: string) {
  return recordSettingsAuditForUser(attempt.user?.id ?? null, {
    actorEmail: attempt.user?.email ?? attempt.email ?? "unknown",
    action: attempt.signIn ? "signin.failed" : "verification.failed",
    details: attempt.signIn
      ? { method: attempt.method, reason }
      : { method: attempt.method, purpose: attempt.purpose, reason },
    ip: attempt.address,
    userAgent: ctx.headers?.get("user-agent") ?? null,
  });
}

const TOTP_PERIOD_S = 30;

/** The plain secret of a stored authenticator (better-auth encrypts it; imported ones are `base32:`-prefixed). */
async function totpSecret(ctx: HookContext, encrypted: string): Promise<string | Uint8Array> {
  const secret = await symmetricDecrypt({ key: ctx.context.secretConfig, data: encrypted });
  return secret.startsWith("base32:") ? base32.decode(secret.slice(7).toUpperCase()) : secret;
}

/**
 * Accepts each TOTP code once (RFC 6238 §5.2): finds the time step the code belongs to (the current one or either
 * neighbour, as better-auth accepts) and claims it with one conditional update, so of two uses of a code, or of a
 * code and an older one, only the first passes. A code that matches no step is left to better-auth to refuse.
 */
async function claimTotpStep(ctx: HookContext, userId: string): Promise<void> {
  const code = typeof ctx.body?.code === "string" ? ctx.body.code.trim() : "";
  if (!/^\d{6}$/.test(code)) return;
  const row = await prisma().twoFactor.findFirst({ where: { userId }, select: { id: true, secret: true } });
  if (!row) return;
  const otp = createOTP((await totpSecret(ctx, row.secret)) as string, { period: TOTP_PERIOD_S, digits: 6 });
  const now = Math.floor(Date.now() / 1000 / TOTP_PERIOD_S);
  let step: number | null = null;
  for (const candidate of [now - 1, now, now + 1]) if ((await otp.hotp(candidate)) === code) step = candidate;
  if (step === null) return;
  const claimed = await prisma().twoFactor.updateMany({
    where: { id: row.id, OR: [{ lastAcceptedStep: null }, { lastAcceptedStep: { lt: step } }] },
    data: { lastAcceptedStep: step },
  });
  if (claimed.count === 0) {
    throw new APIError("UNAUTHORIZED", {
      message: "This code was already used: wait for the next one from your app",
      code: "CODE_ALREADY_USED",
    });
  }
}

/** The plugin; see the file header. */
export function settingsPlugin(): BetterAuthPlugin {
  return {
    id: "crm-settings",
    hooks: {
      before: [
        {
          matcher: (ctx: { path?: string }) => Boolean(ctx.path && ctx.path in CHECKS),
          handler: createAuthMiddleware(async (ctx) => {
            const attempt = await attemptOf(ctx);
            const refusal = await countAttempt({
              email: attempt.email,
              userId: attempt.user?.id ?? null,
              address: attempt.address,
            });
            if (refusal) {
              await record(attempt, ctx, `too many attempts (${refusal.limit})`);
              throw new APIError("TOO_MANY_REQUESTS", { message: refusal.message, code: "TOO_MANY_ATTEMPTS" });
            }
            if (ctx.path === "/two-factor/verify-totp" && attempt.user) {
              try {
                await claimTotpStep(ctx, attempt.user.id);
              } catch (error) {
                await record(attempt, ctx, "code already used");
                throw error;
              }
            }
          }),
        },
        {
          // Dynamic client registration is open to anyone (docs/api-contract.md §10.6): each counts in the client
          // address's anonymous window, as a request without a valid key does, so one address cannot fill the table.
          matcher: (ctx: { path?: string }) => ctx.path === "/oauth2/register",
          handler: createAuthMiddleware(async (ctx) => {
            const decision = await enforceRateLimit({
              kind: "anonymous",
              ip: clientAddressOf(ctx.headers) ?? "unknown",
            });
            if (decision.allowed) return;
            const seconds = decision.retryAfterSeconds ?? 1;
            throw new APIError(
              "TOO_MANY_REQUESTS",
              {
                error: "rate_limited",
                error_description: `Too many registrations from this address; retry in ${seconds} seconds`,
              },
              { ...decision.headers, "Retry-After": String(seconds) },
            );
          }),
        },
        {
          // "SSO required" (sso/enforcement.ts): no password reset for its people; the session hook covers sign-ins.
          matcher: (ctx: { path?: string }) => ctx.path === "/request-password-reset" || ctx.path === "/reset-password",
          handler: createAuthMiddleware(async (ctx) => {
            if (ctx.path === "/request-password-reset") {
              const email = typeof ctx.body?.email === "string" ? ctx.body.email.slice(0, 320) : null;
              await assertMayResetPassword({ email });
              return;
            }
            const token = typeof ctx.body?.token === "string" ? ctx.body.token.slice(0, 512) : "";
            const found = token
              ? await ctx.context.internalAdapter.findVerificationValue(`reset-password:${token}`)
              : null;
            if (found?.value) await assertMayResetPassword({ userId: found.value });
          }),
        },
        {
          matcher: (ctx: { path?: string }) => ctx.path === "/sign-up/email",
          handler: createAuthMiddleware(async (ctx) => {
            const email = typeof ctx.body?.email === "string" ? ctx.body.email.trim().toLowerCase() : "";
            await assertMaySignUp(email);
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
          // The plugin asks browsers to verify the user at registration (authenticatorSelection) but always
          // "preferred" at sign-in; the server refuses an assertion without the UV flag either way (auth.ts).
          matcher: (ctx: { path?: string }) => ctx.path === "/passkey/generate-authenticate-options",
          handler: createAuthMiddleware(async (ctx) => {
            const options = ctx.context.returned;
            if (authRefusalStatus(options) !== null || typeof options !== "object" || options === null) return;
            return ctx.json({ ...options, userVerification: "required" });
          }),
        },
        {
          matcher: (ctx: { path?: string }) => ctx.path === "/passkey/verify-registration",
          handler: createAuthMiddleware(async (ctx) => {
            const session = ctx.context.session;
            if (authRefusalStatus(ctx.context.returned) !== null || !session) return;
            await recordSettingsAuditForUser(session.user.id, {
              actorEmail: session.user.email,
              action: "passkey.added",
              target: `passkey ${(ctx.context.returned as { name?: string } | null)?.name ?? ""}`.trim(),
              ip: clientAddressOf(ctx.headers),
              userAgent: ctx.headers?.get("user-agent") ?? null,
            });
          }),
        },
        {
          // What a refused SSO sign-in recorded, written now that its transaction has rolled back.
          matcher: (ctx: { path?: string }) => Boolean(ctx.path && SSO_SIGN_IN_PATHS.has(ctx.path)),
          handler: createAuthMiddleware(async (ctx) => {
            await flushSsoSignInRecords(ctx.context);
          }),
        },
        {
          // "Test the connection" (sso/sign-in.ts): the browser's own start of a sign-in, marked as that test.
          matcher: (ctx: { path?: string }) => ctx.path === "/sign-in/sso",
          handler: createAuthMiddleware(async (ctx) => {
            const returned = ctx.context.returned as { url?: unknown } | null | undefined;
            if (authRefusalStatus(returned) !== null || typeof returned?.url !== "string") return;
            const session = await getSessionFromCtx(ctx).catch(() => null);
            await markConnectionTest({
              callbackURL: ctx.body?.callbackURL,
              providerId: ctx.body?.providerId,
              userId: session?.user.id ?? null,
              url: returned.url,
            });
          }),
        },
        {
          // RFC 7592: the provider answers a registration without a way to read or delete it; ours is added here.
          matcher: (ctx: { path?: string }) => ctx.path === "/oauth2/register",
          handler: createAuthMiddleware(async (ctx) => {
            const returned = ctx.context.returned as Record<string, unknown> | null | undefined;
            if (authRefusalStatus(returned) !== null || typeof returned?.client_id !== "string") return;
            const management = await issueRegistrationToken(ctx.context.baseURL, returned.client_id);
            ctx.setStatus(201);
            return ctx.json({ ...returned, ...management });
          }),
        },
        {
          matcher: (ctx: { path?: string }) => Boolean(ctx.path && ctx.path in CHECKS),
          handler: createAuthMiddleware(async (ctx) => {
            const returned = ctx.context.returned;
            const attempt = await attemptOf(ctx);
            if (authRefusalStatus(returned) !== null) {
              const reason = (returned as { body?: { code?: string }; message?: string }).message ?? "refused";
              // A refusal by the limit or the replay check was recorded where it was made.
              const code = (returned as { body?: { code?: string } }).body?.code;
              if (code !== "TOO_MANY_ATTEMPTS" && code !== "CODE_ALREADY_USED") await record(attempt, ctx, reason);
              return;
            }
            if (!attempt.signIn) return;
            let session = ctx.context.newSession;
            // A password is not enough for a user who has a passkey (and no authenticator app, whose code
            // better-auth's plugin already asked for): the session is dropped and the page asks for the passkey.
            if (ctx.path === "/sign-in/email" && session) {
              const passkeys = await prisma().passkey.count({ where: { userId: session.user.id } });
              if (passkeys > 0) {
                deleteSessionCookie(ctx, true);
                await ctx.context.internalAdapter.deleteSession(session.session.token);
                ctx.context.setNewSession(null);
                session = null;
                return ctx.json({ passkeyRequired: true });
              }
            }
            if (!session) return; // the password was right; the second factor is still to come
            await recordSettingsAuditForUser(session.user.id, {
              actorEmail: session.user.email,
              action: "signin.succeeded",
              details: { method: attempt.method },
              ip: attempt.address,
              userAgent: ctx.headers?.get("user-agent") ?? null,
            });
            // A break-glass owner let in past "SSO required": recorded in that organisation, where its owners see it.
            const { required } = await requiredMembershipsOf(session.user.id);
            for (const membership of required.filter((m) => m.breakGlass)) {
              await recordSettingsAudit(
                membership.orgId,
                {
                  userId: session.user.id,
                  email: session.user.email,
                  ip: attempt.address,
                  userAgent: ctx.headers?.get("user-agent") ?? null,
                },
                { action: "sso.breakGlassUsed", target: session.user.email, details: { method: attempt.method } },
              );
            }
          }),
        },
      ],
    },
  };
}
