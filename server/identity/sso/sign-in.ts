// Who an SSO sign-in lets in, as what (docs/api-contract.md §11.3, §11.4): @better-auth/sso verifies the protocol
// (the ID token, or the SAML response's signature, audience, time and InResponseTo) and then asks `resolveSsoUser`,
// inside the transaction that will create the session. The plugin's own organisation provisioning (a role at the first
// sign-in only, its membership written past the organization plugin's hooks) is turned off: this applies the
// organisation's policy at every sign-in.
import { randomBytes } from "node:crypto";
import { inflateRawSync } from "node:zlib";
import { tryGetCurrentAuthEndpointContext } from "@better-auth/core/context";
import type { SSOUserResolution, SSOUserResolutionInput } from "@better-auth/sso";
import { prisma } from "../../db/transaction";
import { clientAddressOf } from "../../platform/client-address";
import { type AuditActor, recordSettingsAudit } from "../audit-trail/service";
import { withdrawInvitations } from "../team/withdraw-invitations";
import { domainOf, groupsFrom, mappedRole, type SsoPolicyView, ssoPolicyOf } from "./policy";

/** How long "Test the connection" waits for the identity provider's answer: 10 minutes, in ms. */
export const CONNECTION_TEST_TTL_MS = 10 * 60 * 1000;

/** What a connection test saw: the claims the identity provider sent, as the SSO page shows them. */
export interface ConnectionTestResult {
  protocol: "oidc" | "saml";
  email: string;
  name: string;
  groups: string[];
  /** Every claim (OIDC) or attribute (SAML) received, values cut to 500 characters. */
  claims: Record<string, unknown>;
  /** What a real sign-in would do now: `let in as <role>`, or the refusal's code. */
  outcome: string;
  at: string;
}

/** The refusal codes of an SSO sign-in (docs/api-contract.md §11.4), as the sign-in page's `error` parameter. */
export const SSO_REFUSALS = {
  SSO_OFF: "Single sign-on is off for this organisation",
  DOMAIN_NOT_VERIFIED: "Your email's domain is not verified for this organisation's single sign-on",
  MEMBER_REMOVED: "You were removed from this organisation: ask an owner or admin to invite you again",
  MEMBER_DEPROVISIONED: "Your organisation's directory deactivated you",
  NOT_A_MEMBER: "You are not a member of this organisation: ask an owner or admin to invite you",
  CONNECTION_TESTED: "Connection tested: nothing was changed and no one was signed in",
  SAML_SHA1: "Your identity provider signed with SHA-1: set it to sign with SHA-256",
} as const;

type RefusalCode = keyof typeof SSO_REFUSALS;

function reject(code: RefusalCode): SSOUserResolution {
  return { action: "reject", code, message: SSO_REFUSALS[code] };
}

// A refused SSO sign-in rolls its transaction back: what it records (the refusal, a connection test's result) is written
// once the callback has ended, by flushSsoSignInRecords (our plugin's after hook), keyed by the endpoint's context.
const deferred = new WeakMap<object, Array<() => Promise<void>>>();

function afterSignIn(work: () => Promise<void>): void {
  const ctx = tryGetCurrentAuthEndpointContext();
  if (!ctx) return;
  const list = deferred.get(ctx.context) ?? [];
  list.push(work);
  deferred.set(ctx.context, list);
}

/** Writes what a refused SSO sign-in recorded ({@link resolveSsoUser}); called once its callback has ended. */
export async function flushSsoSignInRecords(context: object): Promise<void> {
  const list = deferred.get(context);
  deferred.delete(context);
  for (const work of list ?? []) await work();
}

function testMarker(correlation: string): string {
  return `sso-test:${correlation}`;
}

function testResultKey(nonce: string): string {
  return `sso-test-result:${nonce}`;
}

function pendingTestKey(nonce: string): string {
  return `sso-test-pending:${nonce}`;
}

/** Where a connection test's browser comes back to: the SSO page with the test's nonce. */
export function connectionTestCallback(nonce: string): string {
  return `/settings/security/sso?test=${nonce}`;
}

const CALLBACK_PATTERN = /^\/settings\/security\/sso\?test=([A-Za-z0-9_-]{16})$/;

/** Opens a connection test of `orgId`'s provider by `testerId`: its nonce, valid {@link CONNECTION_TEST_TTL_MS}. */
export async function openConnectionTest(orgId: string, testerId: string): Promise<string> {
  const nonce = randomBytes(12).toString("base64url");
  await prisma().verification.create({
    data: {
      id: randomBytes(16).toString("hex"),
      identifier: pendingTestKey(nonce),
      value: JSON.stringify({ orgId, testerId }),
      expiresAt: new Date(Date.now() + CONNECTION_TEST_TTL_MS),
    },
  });
  return nonce;
}

/** The AuthnRequest id of a SAML redirect URL (`SAMLRequest`: deflated, base64). */
function authnRequestId(url: URL): string | null {
  const request = url.searchParams.get("SAMLRequest");
  if (!request) return null;
  try {
    const xml = inflateRawSync(Buffer.from(request, "base64")).toString("utf8");
    return /<(?:\w+:)?AuthnRequest\b[^>]*\sID="([^"]+)"/.exec(xml)?.[1] ?? null;
  } catch {
    return null;
  }
}

/**
 * After a sign-in through a provider started (`/sign-in/sso` answered `url`): when it was started by the tester of an
 * open connection test of that provider's organisation, with that test's `callbackURL`, marks the request the
 * identity provider will answer (the OIDC `state`, or the SAML AuthnRequest ID) as that test, so its answer is
 * recorded instead of signing anyone in.
 */
export async function markConnectionTest(input: {
  callbackURL: unknown;
  providerId: unknown;
  userId: string | null;
  url: string;
}): Promise<void> {
  const nonce = typeof input.callbackURL === "string" ? CALLBACK_PATTERN.exec(input.callbackURL)?.[1] : undefined;
  if (!nonce || !input.userId || typeof input.providerId !== "string") return;
  const pending = await prisma().verification.findFirst({
    where: { identifier: pendingTestKey(nonce), expiresAt: { gt: new Date() } },
    select: { id: true, value: true },
  });
  if (!pending) return;
  const test = JSON.parse(pending.value) as { orgId: string; testerId: string };
  const provider = await prisma().ssoProvider.findUnique({
    where: { providerId: input.providerId },
    select: { orgId: true },
  });
  if (test.testerId !== input.userId || provider?.orgId !== test.orgId) return;
  const url = new URL(input.url);
  const correlation = url.searchParams.get("state") ?? authnRequestId(url);
  if (!correlation) return;
  await prisma().verification.update({
    where: { id: pending.id },
    data: {
      identifier: testMarker(correlation),
      value: JSON.stringify({ ...test, nonce }),
      expiresAt: new Date(Date.now() + CONNECTION_TEST_TTL_MS),
    },
  });
}

/** The result of the test `nonce` started by `testerId` in `orgId`, once the identity provider answered. */
export async function connectionTestResult(
  orgId: string,
  testerId: string,
  nonce: string,
): Promise<ConnectionTestResult | null> {
  const row = await prisma().verification.findFirst({
    where: { identifier: testResultKey(nonce), expiresAt: { gt: new Date() } },
    select: { value: true },
  });
  if (!row) return null;
  const stored = JSON.parse(row.value) as { orgId: string; testerId: string; result: ConnectionTestResult };
  return stored.orgId === orgId && stored.testerId === testerId ? stored.result : null;
}

/** The value that ties this callback to the request that started it: the OIDC `state` or the SAML `InResponseTo`. */
function correlationOfCallback(protocol: "oidc" | "saml"): string | null {
  const ctx = tryGetCurrentAuthEndpointContext();
  if (!ctx) return null;
  if (protocol === "oidc") {
    const state = (ctx.query as { state?: unknown } | undefined)?.state ?? (ctx.body as { state?: unknown })?.state;
    return typeof state === "string" ? state : null;
  }
  // The plugin has verified the response's signature by now; this reads which request it answers.
  const xml = samlResponseOfCallback();
  return xml ? (/<(?:\w+:)?Response\b[^>]*\sInResponseTo="([^"]{1,256})"/.exec(xml)?.[1] ?? null) : null;
}

/** The XML of the SAML Response this ACS callback received, or null. */
function samlResponseOfCallback(): string | null {
  const response = (tryGetCurrentAuthEndpointContext()?.body as { SAMLResponse?: unknown } | undefined)?.SAMLResponse;
  if (typeof response !== "string" || response.length > 1_000_000) return null;
  return Buffer.from(response.replace(/\s+/g, ""), "base64").toString("utf8");
}

/**
 * Whether a signature of this callback's SAML Response (or one that cannot be read) uses SHA-1, as its signature or a
 * digest: the plugin checks the algorithm of redirect-binding messages only, never of a Response posted to the ACS.
 */
function samlSignedWithSha1(): boolean {
  const xml = samlResponseOfCallback();
  if (xml === null) return true;
  const signatures = xml.match(/<(?:\w+:)?Signature\b[\s\S]*?<\/(?:\w+:)?Signature>/g) ?? [];
  const sha1 = /<(?:\w+:)?(?:SignatureMethod|DigestMethod)\b[^>]*\bAlgorithm\s*=\s*["'][^"']*sha1["']/i;
  return signatures.some((signature) => sha1.test(signature));
}

function actorOfCallback(userId: string | null, email: string): AuditActor {
  const ctx = tryGetCurrentAuthEndpointContext();
  return {
    userId,
    email,
    ip: clientAddressOf(ctx?.headers),
    userAgent: ctx?.headers?.get("user-agent") ?? null,
  };
}

function claimsOf(input: SSOUserResolutionInput): Record<string, unknown> {
  return input.protocol === "oidc"
    ? { ...input.verifiedIdTokenClaims, ...input.providerClaims }
    : (input.providerAttributes as Record<string, unknown>);
}

/**
 * The claims the groups are read from: a SAML attribute with one value reaches us as a string (samlify's), which is
 * that one group, commas and all (`CN=CRM Admins,OU=Groups,…`), as it would be with a second value beside it; only an
 * OIDC string claim is a comma-separated list.
 */
function groupClaimsOf(protocol: "oidc" | "saml", claims: Record<string, unknown>, claim: string) {
  const value = Object.hasOwn(claims, claim) ? claims[claim] : undefined;
  return protocol === "saml" && typeof value === "string" ? { [claim]: [value] } : claims;
}

function shown(claims: Record<string, unknown>): Record<string, unknown> {
  const cut = (value: unknown): unknown => {
    if (typeof value === "string") return value.slice(0, 500);
    if (Array.isArray(value)) return value.slice(0, 100).map(cut);
    return typeof value === "object" && value !== null ? JSON.stringify(value).slice(0, 500) : value;
  };
  return Object.fromEntries(
    Object.entries(claims)
      .slice(0, 100)
      .map(([key, value]) => [key, cut(value)]),
  );
}

async function recordDirectoryEvent(orgId: string, action: string, target: string, details: object, ok = true) {
  await prisma().directoryEvent.create({
    data: { orgId, action, target, outcome: ok ? "ok" : "error", details: details as never },
  });
}

/** What the policy makes of an identity: a refusal, or the user to sign in with the membership to give. */
type Decision =
  | { refuse: RefusalCode }
  | { userId: string | null; memberId: string | null; currentRole: string | null; role: string };

async function decide(orgId: string, policy: SsoPolicyView, email: string, groups: string[]): Promise<Decision> {
  if (policy.mode === "off") return { refuse: "SSO_OFF" };
  const verified = await prisma().ssoDomain.count({
    where: { orgId, domain: domainOf(email), verifiedAt: { not: null } },
  });
  if (verified === 0) return { refuse: "DOMAIN_NOT_VERIFIED" };
  const removal = await prisma().memberRemoval.findUnique({
    where: { orgId_email: { orgId, email } },
    select: { source: true },
  });
  if (removal) {
    return { refuse: removal.source === "directory" ? "MEMBER_DEPROVISIONED" : "MEMBER_REMOVED" };
  }
  const user = await prisma().user.findUnique({ where: { email }, select: { id: true } });
  const member = user
    ? await prisma().member.findUnique({
        where: { orgId_userId: { orgId, userId: user.id } },
        select: { id: true, role: true },
      })
    : null;
  if (!member && !policy.jit) return { refuse: "NOT_A_MEMBER" };
  // The map decides roles once it has a rule; an owner keeps ownership, which only a person gives or takes.
  const keepsRole = member && (member.role === "owner" || policy.groupRoles.length === 0);
  const role = keepsRole ? member.role : mappedRole(policy, groups);
  return { userId: user?.id ?? null, memberId: member?.id ?? null, currentRole: member?.role ?? null, role };
}

/**
 * The plugin's `resolveUser` (docs/api-contract.md §11.3, §11.4): runs at every SSO sign-in, in the transaction that
 * creates the session. Refuses (the sign-in page shows the code: {@link SSO_REFUSALS}) a SAML Response signed with
 * SHA-1 (a connection test's too), and when the organisation's SSO is off, the email's domain is not one of its
 * verified domains, the person was removed by hand or deactivated by the directory (their removal is kept), or is not a
 * member and just-in-time membership is off. Otherwise links the identity to the user of that email (creating the user
 * for a just-in-time member), adds the membership with the mapped role or applies the map to an existing one (never to
 * an owner), each change recorded in the settings audit trail and the directory events. A sign-in started by "Test the
 * connection" records what was received and refuses with `CONNECTION_TESTED`, changing nothing.
 */
export async function resolveSsoUser(input: SSOUserResolutionInput): Promise<SSOUserResolution> {
  const provider = await prisma().ssoProvider.findUnique({
    where: { providerId: input.providerId },
    select: { orgId: true },
  });
  if (!provider) return reject("SSO_OFF");
  if (input.protocol === "saml" && samlSignedWithSha1()) return reject("SAML_SHA1");
  const orgId = provider.orgId;
  const email = input.providerUser.email.trim().toLowerCase();
  const claims = claimsOf(input);
  const policy = await ssoPolicyOf(orgId);
  const groups = groupsFrom(groupClaimsOf(input.protocol, claims, policy.groupsClaim), policy.groupsClaim);

  const correlation = correlationOfCallback(input.protocol);
  const marker = correlation
    ? await prisma().verification.findFirst({
        where: { identifier: testMarker(correlation), expiresAt: { gt: new Date() } },
        select: { id: true, value: true },
      })
    : null;
  if (marker) {
    const test = JSON.parse(marker.value) as { orgId: string; testerId: string; nonce: string };
    if (test.orgId === orgId) {
      const decision = await decide(orgId, policy, email, groups);
      const result: ConnectionTestResult = {
        protocol: input.protocol,
        email,
        name: input.providerUser.name,
        groups,
        claims: shown(claims),
        outcome: "refuse" in decision ? decision.refuse : `let in as ${decision.role}`,
        at: new Date().toISOString(),
      };
      afterSignIn(async () => {
        await prisma().verification.deleteMany({ where: { id: marker.id } });
        await prisma().verification.create({
          data: {
            id: randomBytes(16).toString("hex"),
            identifier: testResultKey(test.nonce),
            value: JSON.stringify({ orgId, testerId: test.testerId, result }),
            expiresAt: new Date(Date.now() + CONNECTION_TEST_TTL_MS),
          },
        });
      });
      return reject("CONNECTION_TESTED");
    }
  }

  const decision = await decide(orgId, policy, email, groups);
  if ("refuse" in decision) {
    const details = { code: decision.refuse, protocol: input.protocol };
    afterSignIn(() => recordDirectoryEvent(orgId, "signin.refused", email, details, false));
    return reject(decision.refuse);
  }
  let userId = decision.userId;
  if (!userId) {
    const created = await prisma().user.create({
      data: { email, name: input.providerUser.name.trim().slice(0, 100) || email, emailVerified: true },
      select: { id: true },
    });
    userId = created.id;
  }
  const actor = actorOfCallback(userId, email);
  if (!decision.memberId) {
    await prisma().member.create({
      data: { id: randomBytes(16).toString("hex"), orgId, userId, role: decision.role },
    });
    await recordSettingsAudit(orgId, actor, {
      action: "member.joined",
      target: email,
      details: { role: decision.role, groups: groups.join(", ").slice(0, 500) },
    });
    await recordDirectoryEvent(orgId, "member.joined", email, { role: decision.role, via: input.protocol });
  } else if (decision.currentRole !== decision.role) {
    await prisma().member.update({ where: { id: decision.memberId }, data: { role: decision.role } });
    await recordSettingsAudit(orgId, actor, {
      action: "member.roleChanged",
      target: email,
      details: { from: decision.currentRole, to: decision.role, by: "identity provider groups" },
    });
    // As a change by hand does (team/change-role.ts): invitations for roles they can no longer give are withdrawn.
    await withdrawInvitations(orgId, userId, decision.role, actor, `${email}'s groups made them ${decision.role}`);
    await recordDirectoryEvent(orgId, "member.role_changed", email, {
      from: decision.currentRole,
      to: decision.role,
      via: input.protocol,
    });
  }
  return { action: "link", userId, profile: "preserve" };
}
