// The settings' sign-in, sessions, organisations, two-factor and passkeys on better-auth (docs/architecture.md,
// "Settings: sign-in, team and roles"): one instance per public origin, on our Prisma client (PostgreSQL and the
// embedded database alike), its rate limits in our key-value store; our plugin (auth-plugin.ts) limits and records
// every password and code check.
import { AsyncLocalStorage } from "node:async_hooks";
import { hash as digest } from "node:crypto";
import { passkey } from "@better-auth/passkey";
import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { APIError } from "better-auth/api";
import { nextCookies } from "better-auth/next-js";
import { organization, twoFactor } from "better-auth/plugins";
import type { PrismaClient } from "../db/generated/client";
import { afterCommit, prisma, transaction } from "../db/transaction";
import { env } from "../env";
import { kv } from "../kv";
import { warnThrottled } from "../kv/warn";
import { CLIENT_ADDRESS_HEADER, canonicalAddress, clientAddressOf } from "../platform/client-address";
import { sendMail } from "../platform/mail";
import { SECOND_FACTOR_OF_PATH, SIGN_IN_PATHS, settingsPlugin } from "./better-auth-plugin";
import { directoryPlugins } from "./directory/plugin";
import { oauthPlugins } from "./oauth/provider";
import { adapterDelegate } from "./oauth/storage";
import {
  hashPassword,
  isLegacyPasswordHash,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  verifyPassword,
} from "./passwords";
import { accessControl, grantableRoles, roles } from "./roles";
import { authSecret } from "./secret";
import { assertMayStartSession } from "./sso/enforcement";
import { SSO_DISABLED_PATHS, SSO_SIGN_IN_PATHS, ssoPlugin } from "./sso/plugin";

/** Where better-auth's HTTP endpoints are mounted (`app/api/auth/[...all]/route.ts`). */
export const AUTH_BASE_PATH = "/api/auth";

/** A session lasts 7 days from sign-in (604,800 s) and is not extended by use; signing in again starts a new one. */
export const SESSION_TTL_SECONDS = 7 * 24 * 60 * 60;

/** Invitations expire 7 days (604,800 s) after they are sent; resending makes a new link with a new 7 days. */
export const INVITATION_TTL_SECONDS = 7 * 24 * 60 * 60;

/** A password-reset link works once, for 1 hour (3,600 s). */
export const PASSWORD_RESET_TTL_SECONDS = 60 * 60;

function hashed(value: string): string {
  return digest("sha256", value, "hex").slice(0, 32);
}

// The Prisma client better-auth queries through: always the current one (`prisma()`), so its writes join the
// enclosing transaction when a service runs it inside one, and its own transactions join that transaction too (through
// this proxy again, so the OAuth tables' writes keep their null lists: oauth/storage.ts).
const client = new Proxy({} as PrismaClient, {
  get(_target, property) {
    if (property === "$transaction") {
      return (work: unknown, options?: unknown) =>
        typeof work === "function"
          ? transaction(() => (work as (tx: PrismaClient) => Promise<unknown>)(client))
          : prisma().$transaction(work as never, options as never);
    }
    const current = prisma();
    const value = Reflect.get(current, property);
    if (typeof value === "function") return value.bind(current);
    return typeof property === "string" ? adapterDelegate(property, value) : value;
  },
});

/** How an invitation's mail went: `sent`, `not-configured` (no SMTP) or `failed` (logged; the link is shown anyway). */
export type MailOutcome = "sent" | "not-configured" | "failed";

/** What better-auth handed over while a service's call ran: a password-reset token, an invitation's mail. */
interface AuthOutbox {
  resetToken?: string;
  invitationMail?: Promise<MailOutcome>;
}

// One per process, as the better-auth instances are (authFor): the copy of this module whose instance runs a hook
// may not be the copy whose service opened the box (Next.js bundles its own beside dist/serve.js's).
const outboxHolder = globalThis as unknown as { __crmAuthOutbox?: AsyncLocalStorage<AuthOutbox> };
outboxHolder.__crmAuthOutbox ??= new AsyncLocalStorage<AuthOutbox>();
const outbox = outboxHolder.__crmAuthOutbox;

/**
 * Runs `work` (a `requestPasswordReset` call) and returns the reset token better-auth issued inside it, instead of
 * mailing it: how `npm run admin -- reset-password` prints a one-time link.
 */
export async function capturePasswordResetToken(work: () => Promise<unknown>): Promise<string | undefined> {
  const box: AuthOutbox = {};
  await outbox.run(box, work);
  return box.resetToken;
}

/**
 * Runs `work` (a transaction that creates an invitation through better-auth) and returns its result with how the
 * invitation's mail went: better-auth's `sendInvitationEmail` mails the link once the transaction has committed, so a
 * rolled-back invitation mails nothing.
 */
export async function withInvitationMail<T>(work: () => Promise<T>): Promise<{ result: T; mailed: MailOutcome }> {
  const box: AuthOutbox = {};
  const result = await outbox.run(box, work);
  return { result, mailed: (await box.invitationMail) ?? "not-configured" };
}

/** The link of an invitation: `<origin>/invite/<id>`. */
export function invitationLink(origin: string, invitationId: string): string {
  return `${origin}/invite/${encodeURIComponent(invitationId)}`;
}

interface InvitationMailData {
  id: string;
  role: string;
  email: string;
  organization: { name: string };
  inviter: { user: { email: string } };
  invitation: { expiresAt: Date | string };
}

function mailInvitation(origin: string, data: InvitationMailData): Promise<MailOutcome> {
  const expiresAt = new Date(data.invitation.expiresAt);
  return sendMail({
    to: data.email,
    subject: `Join ${data.organization.name} on MSP CRM`,
    text: [
      `${data.inviter.user.email} invited you to join ${data.organization.name} as ${data.role}.`,
      "",
      `Accept the invitation: ${invitationLink(origin, data.id)}`,
      "",
      `The link works until ${expiresAt.toUTCString()}. If you did not expect it, ignore this message.`,
    ].join("\n"),
  });
}

/**
 * Refuses to accept an invitation whose inviter can no longer give its role (demoted or removed since: its invitation
 * is withdrawn then, docs/api-contract.md §5.10; this holds for one sent before that rule too).
 */
async function inviterMayStillGrant(invitation: { organizationId: string; inviterId: string; role: string }) {
  const inviter = await prisma().member.findUnique({
    where: { orgId_userId: { orgId: invitation.organizationId, userId: invitation.inviterId } },
    select: { role: true },
  });
  if (!inviter || !(grantableRoles(inviter.role) as readonly string[]).includes(invitation.role)) {
    throw new APIError("FORBIDDEN", {
      message: "This invitation was withdrawn: whoever sent it can no longer give that role",
      code: "INVITATION_WITHDRAWN",
    });
  }
}

interface SessionTimes {
  createdAt: Date;
  expiresAt: Date;
  reauthenticatedAt?: Date | null;
  secondFactor?: string | null;
  lastSeenAt?: Date | null;
}

/**
 * The fields a new session gets from how it was made. A session that replaces the request's own (better-auth rotates
 * the token when the authenticator app is turned on or off) is the same sign-in: it keeps the replaced one's sign-in
 * time, expiry, last confirmation, second factor and "last seen", so no factor change extends, freshens or upgrades
 * a session. A sign-in (a sign-in path without a session: a password, the code or backup code of a sign-in's second
 * step, a passkey) is fresh for step-up and names the second factor it proved.
 */
function originFields(
  path: string | undefined,
  replaced: SessionTimes | null,
  now: Date,
  params: Record<string, unknown> | undefined,
) {
  if (replaced) {
    return {
      createdAt: replaced.createdAt,
      expiresAt: replaced.expiresAt,
      reauthenticatedAt: replaced.reauthenticatedAt ?? null,
      secondFactor: replaced.secondFactor ?? null,
      lastSeenAt: replaced.lastSeenAt ?? null,
    };
  }
  if (path && SSO_SIGN_IN_PATHS.has(path)) {
    // Fresh for step-up, with no second factor of ours: a member who has one confirms it for what needs it.
    const providerId = typeof params?.providerId === "string" ? params.providerId : null;
    return { reauthenticatedAt: now, secondFactor: null, ssoProviderId: providerId };
  }
  if (!path || !SIGN_IN_PATHS.has(path)) return {};
  return { reauthenticatedAt: now, secondFactor: SECOND_FACTOR_OF_PATH[path] ?? null };
}

/**
 * The passkey plugin's check of every WebAuthn ceremony it has verified: the authenticator must have verified the user
 * (the UV flag, a PIN or a biometric), not only seen them present (UP). `@better-auth/passkey` verifies with
 * `requireUserVerification: false`, so a security key without a PIN would otherwise be a whole sign-in.
 * @throws APIError `UNAUTHORIZED` (401) `USER_VERIFICATION_REQUIRED` when the flag is not set.
 */
function requireUserVerified(userVerified: boolean | undefined): void {
  if (userVerified) return;
  throw new APIError("UNAUTHORIZED", {
    message: "Your passkey did not verify you (no PIN, fingerprint or face check): use one that does",
    code: "USER_VERIFICATION_REQUIRED",
  });
}

function createAuth(origin: string) {
  const secure = origin.startsWith("https:");
  return betterAuth({
    appName: "MSP CRM",
    baseURL: origin,
    basePath: AUTH_BASE_PATH,
    secret: authSecret(),
    // Identity providers on private addresses the operator allows (SSO_TRUSTED_IDP_ORIGINS) are the only others.
    trustedOrigins: [origin, ...env().SSO_TRUSTED_IDP_ORIGINS],
    disabledPaths: SSO_DISABLED_PATHS,
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
        const box = outbox.getStore();
        if (box) box.resetToken = token;
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
        secondFactor: { type: "string", required: false, input: false },
        ssoProviderId: { type: "string", required: false, input: false },
      },
    },
    databaseHooks: {
      session: {
        create: {
          // A sign-in is fresh for step-up and names the second factor it proved, if any; a session made to replace
          // the request's own is that session still (originFields); a new session opens on the user's first
          // organisation (the one they joined first), and keeps the address the audit trail records: better-auth's
          // own is its rate-limit key, IPv6 cut to the /64 (`::1` stored as `0000:…:0000`).
          before: async (session, context) => {
            const ipAddress =
              clientAddressOf(context?.headers ?? context?.request?.headers) ?? canonicalAddress(session.ipAddress);
            const current = (context?.context as { session?: { session?: SessionTimes & { userId?: string } } | null })
              ?.session?.session;
            const replaced = current && current.userId === session.userId ? current : null;
            const params = (context as { params?: Record<string, unknown> } | null)?.params;
            const fields = { ...originFields(context?.path, replaced, new Date(), params), ipAddress };
            // "SSO required" holds for every path that makes a session but single sign-on (sso/enforcement.ts).
            if (!replaced && !(context?.path && SSO_SIGN_IN_PATHS.has(context.path))) {
              // A password sign-in of someone with a second factor makes a session the two-factor plugin (or ours,
              // for a passkey) drops at once to ask for that factor; looked up only for a break-glass owner.
              const secondFactorToFollow = async () =>
                context?.path === "/sign-in/email" &&
                ((await prisma().user.count({ where: { id: session.userId, twoFactorEnabled: true } })) > 0 ||
                  (await prisma().passkey.count({ where: { userId: session.userId } })) > 0);
              await assertMayStartSession(session.userId, {
                secondFactorProved: Boolean(context?.path && SECOND_FACTOR_OF_PATH[context.path]),
                secondFactorToFollow,
              });
            }
            if (session.activeOrganizationId) return { data: { ...session, ...fields } };
            // An SSO sign-in opens the organisation whose provider it came through.
            const provider =
              "ssoProviderId" in fields && fields.ssoProviderId
                ? await prisma().ssoProvider.findUnique({
                    where: { providerId: fields.ssoProviderId },
                    select: { orgId: true },
                  })
                : null;
            if (provider) return { data: { ...session, ...fields, activeOrganizationId: provider.orgId } };
            const first = await prisma().member.findFirst({
              where: { userId: session.userId },
              orderBy: { createdAt: "asc" },
              select: { orgId: true },
            });
            return { data: { ...session, ...fields, activeOrganizationId: first?.orgId ?? null } };
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
        // Mailed once the invitation's transaction has committed; the page shows the link either way.
        sendInvitationEmail: async (data) => {
          const box = outbox.getStore();
          const mailed = new Promise<MailOutcome>((resolve) => {
            void afterCommit(async () => resolve(await mailInvitation(origin, data)));
          });
          if (box) box.invitationMail = mailed;
        },
        organizationHooks: {
          beforeAcceptInvitation: ({ invitation }) => inviterMayStillGrant(invitation),
        },
        schema: {
          session: { fields: { activeOrganizationId: "activeOrgId" } },
          organization: { modelName: "organisation" },
          member: { fields: { organizationId: "orgId" } },
          invitation: { fields: { organizationId: "orgId" } },
        },
      }),
      twoFactor({ issuer: "MSP CRM", backupCodeOptions: { amount: 10 } }),
      passkey({
        rpID: new URL(origin).hostname,
        rpName: "MSP CRM settings",
        origin,
        // Browsers are asked for user verification (our plugin asks the same of sign-in's options), and the server
        // checks the flag of every registration and assertion.
        authenticatorSelection: { residentKey: "preferred", userVerification: "required" },
        registration: {
          afterVerification: ({ verification }) => requireUserVerified(verification.registrationInfo?.userVerified),
        },
        authentication: {
          afterVerification: ({ verification }) => requireUserVerified(verification.authenticationInfo.userVerified),
        },
      }),
      // OAuth 2.1 for MCP clients (oauth/provider.ts); our plugin, after it, counts dynamic registrations.
      ...oauthPlugins(origin),
      ssoPlugin(),
      // Provisioning (SCIM 2.0): directory/plugin.ts.
      ...directoryPlugins(),
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
