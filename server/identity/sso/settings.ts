// The single sign-on page's actions (docs/api-contract.md §11): connecting an identity provider through
// @better-auth/sso's own registration (called here, never over HTTP: plugin.ts), the policy, break-glass owners and
// testing the connection. Roles and step-up are checked by the procedures (settings-procedures.ts); each change is in
// the settings audit trail.
import { z } from "zod";
import { prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { recordSettingsAudit } from "../audit-trail/service";
import { AUTH_BASE_PATH, authFor } from "../better-auth";
import { viaAuth } from "../better-auth-errors";
import { actorOf, type SignedInMember } from "../session";
import { listSsoDomains, type SsoDomainView, syncProviderDomains, verifySsoDomain } from "./domains";
import { providerIdOf } from "./plugin";
import { GROUP_ROLE_RULES_MAX, GroupRoleRuleSchema, SSO_MODES, type SsoPolicyView, ssoPolicyOf } from "./policy";
import { connectionTestCallback, openConnectionTest } from "./sign-in";

/** Largest IdP metadata XML accepted: 100 KiB (102,400 bytes), the plugin's own bound. */
export const SAML_METADATA_MAX_BYTES = 102_400;

/**
 * The URLs an identity provider is configured with (docs/api-contract.md §11.1), for the provider `providerId` on
 * `origin`: the OIDC redirect URI, the SAML ACS (reply) URL, and the SP entity id, which is also the SP metadata URL.
 */
export function ssoUrls(origin: string, providerId: string) {
  const base = `${origin}${AUTH_BASE_PATH}`;
  const id = encodeURIComponent(providerId);
  return {
    redirectUri: `${base}/sso/callback/${id}`,
    acsUrl: `${base}/sso/saml2/sp/acs/${id}`,
    spEntityId: `${base}/sso/saml2/sp/metadata?providerId=${id}`,
    spMetadataUrl: `${base}/sso/saml2/sp/metadata?providerId=${id}`,
  };
}

/** The connected identity provider as the page shows it; never the client secret. */
export interface SsoProviderView {
  providerId: string;
  protocol: "oidc" | "saml";
  /** OIDC: the issuer; SAML: the IdP's entity id. */
  issuer: string;
  clientId: string | null;
  idpSsoUrl: string | null;
  configuredAt: Date;
}

/** Everything the single sign-on page shows. */
export interface SsoOverview {
  provider: SsoProviderView | null;
  urls: ReturnType<typeof ssoUrls>;
  domains: SsoDomainView[];
  policy: SsoPolicyView;
  /** Owners, with whether each is a break-glass owner and has a second factor. */
  owners: { memberId: string; email: string; breakGlass: boolean; hasSecondFactor: boolean }[];
  /** The last 20 break-glass sign-ins. */
  breakGlassUses: { at: Date; email: string; method: string | null }[];
}

function providerView(row: {
  providerId: string;
  issuer: string;
  oidcConfig: string | null;
  samlConfig: string | null;
  updatedAt: Date;
}): SsoProviderView {
  const oidc = row.oidcConfig ? (JSON.parse(row.oidcConfig) as { clientId?: string; issuer?: string }) : null;
  const saml = row.samlConfig
    ? (JSON.parse(row.samlConfig) as { idpMetadata?: { metadata?: string; entityID?: string } })
    : null;
  const metadata = saml?.idpMetadata?.metadata ?? "";
  return {
    providerId: row.providerId,
    protocol: oidc ? "oidc" : "saml",
    issuer: oidc?.issuer ?? /entityID="([^"]+)"/.exec(metadata)?.[1] ?? saml?.idpMetadata?.entityID ?? row.issuer,
    clientId: oidc?.clientId ?? null,
    idpSsoUrl: saml ? (/SingleSignOnService[^>]*Location="([^"]+)"/.exec(metadata)?.[1] ?? null) : null,
    configuredAt: row.updatedAt,
  };
}

/** The single sign-on page of the member's organisation. */
export async function ssoOverview(member: SignedInMember): Promise<SsoOverview> {
  const orgId = member.org.id;
  const [provider, domains, policy, owners, uses] = await Promise.all([
    prisma().ssoProvider.findUnique({ where: { orgId } }),
    listSsoDomains(orgId),
    ssoPolicyOf(orgId),
    prisma().member.findMany({
      where: { orgId, role: "owner" },
      select: {
        id: true,
        breakGlass: true,
        user: { select: { email: true, twoFactorEnabled: true, _count: { select: { passkeys: true } } } },
      },
      orderBy: { createdAt: "asc" },
    }),
    prisma().settingsAuditEntry.findMany({
      where: { orgId, action: "sso.breakGlassUsed" },
      orderBy: { id: "desc" },
      take: 20,
      select: { createdAt: true, actorEmail: true, details: true },
    }),
  ]);
  return {
    provider: provider ? providerView(provider) : null,
    urls: ssoUrls(member.request.origin, providerIdOf(orgId)),
    domains,
    policy,
    owners: owners.map((owner) => ({
      memberId: owner.id,
      email: owner.user.email,
      breakGlass: owner.breakGlass,
      hasSecondFactor: owner.user.twoFactorEnabled || owner.user._count.passkeys > 0,
    })),
    breakGlassUses: uses.map((use) => ({
      at: use.createdAt,
      email: use.actorEmail,
      method: ((use.details ?? {}) as { method?: string }).method ?? null,
    })),
  };
}

/** The fields of an OIDC connection (docs/api-contract.md §11.1). */
export const OidcConnectionSchema = z.object({
  issuer: z.url().max(2048).describe("The issuer URL; discovery reads <issuer>/.well-known/openid-configuration"),
  clientId: z.string().trim().min(1).max(512),
  clientSecret: z.string().min(1).max(2048),
  /** Extra scopes beyond `openid email profile` (e.g. `groups`). */
  extraScopes: z
    .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,100}$/))
    .max(10)
    .default([]),
});

/**
 * The fields of a SAML connection: the IdP's metadata XML, pasted or uploaded (never fetched); what it must be is
 * checked by {@link connectSaml} (422, as the plugin's own refusals are).
 */
export const SamlConnectionSchema = z.object({ metadataXml: z.string().min(1) });

/** Why `xml` cannot be an identity provider's SAML metadata, or null. */
function samlMetadataProblem(xml: string): string | null {
  if (Buffer.byteLength(xml) > SAML_METADATA_MAX_BYTES) return "The metadata is larger than 100 KiB";
  if (!/<(?:\w+:)?EntityDescriptor\b/.test(xml)) return "This is not SAML metadata (no EntityDescriptor)";
  if (!/<(?:\w+:)?IDPSSODescriptor\b/.test(xml)) return "This metadata has no identity provider (IDPSSODescriptor)";
  return null;
}

async function registerProvider(member: SignedInMember, body: Record<string, unknown>): Promise<void> {
  const orgId = member.org.id;
  const providerId = providerIdOf(orgId);
  await transaction(async () => {
    await prisma().$queryRaw`SELECT id FROM "Organisation" WHERE id = ${orgId} FOR NO KEY UPDATE`;
    await prisma().ssoProvider.deleteMany({ where: { orgId } });
    await viaAuth(() =>
      authFor(member.request.origin).api.registerSSOProvider({
        headers: member.request.headers,
        body: { providerId, organizationId: orgId, domain: "unverified.invalid", ...body } as never,
      }),
    );
    await syncProviderDomains(orgId);
  });
}

/**
 * Connects (or replaces) the organisation's OIDC provider: discovery from the issuer (publicly routable, or one of
 * `SSO_TRUSTED_IDP_ORIGINS`), PKCE, scopes `openid email profile` and the extra ones.
 * @throws ApiError `validation_error` (422) when discovery fails or an endpoint is not allowed (the plugin's reason).
 */
export async function connectOidc(member: SignedInMember, input: z.infer<typeof OidcConnectionSchema>) {
  await registerProvider(member, {
    issuer: input.issuer.replace(/\/+$/, ""),
    oidcConfig: {
      clientId: input.clientId,
      clientSecret: input.clientSecret,
      pkce: true,
      scopes: [...new Set(["openid", "email", "profile", ...input.extraScopes])],
    },
  });
  await recordSettingsAudit(member.org.id, actorOf(member), {
    action: "sso.providerConfigured",
    target: input.issuer,
    details: { protocol: "oidc", clientId: input.clientId },
  });
}

/**
 * Connects (or replaces) the organisation's SAML provider from its metadata XML: assertions must be signed, NameID
 * the email address.
 * @throws ApiError `validation_error` (422) for metadata over 100 KiB, that is not SAML metadata or has no identity
 *         provider, or that the plugin refuses.
 */
export async function connectSaml(member: SignedInMember, input: z.infer<typeof SamlConnectionSchema>) {
  const problem = samlMetadataProblem(input.metadataXml);
  if (problem) {
    throw new ApiError("validation_error", problem, { details: [{ path: ["metadataXml"], message: problem }] });
  }
  const urls = ssoUrls(member.request.origin, providerIdOf(member.org.id));
  await registerProvider(member, {
    issuer: urls.spEntityId,
    samlConfig: {
      entryPoint: /SingleSignOnService[^>]*Location="([^"]+)"/.exec(input.metadataXml)?.[1] ?? "",
      // Where the ACS sends the browser when the RelayState that names the page is gone (a replay, a Response without
      // it): a refusal lands on the sign-in page with its code (docs/api-contract.md §11.4), which sends a signed-in
      // member on to the settings.
      callbackUrl: "/signin",
      audience: urls.spEntityId,
      idpMetadata: { metadata: input.metadataXml },
      spMetadata: {},
      wantAssertionsSigned: true,
      identifierFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
      mapping: { email: "email", name: "name" },
    },
  });
  const view = providerView({
    providerId: "",
    issuer: "",
    oidcConfig: null,
    samlConfig: JSON.stringify({ idpMetadata: { metadata: input.metadataXml } }),
    updatedAt: new Date(),
  });
  await recordSettingsAudit(member.org.id, actorOf(member), {
    action: "sso.providerConfigured",
    target: view.issuer,
    details: { protocol: "saml" },
  });
}

/**
 * Disconnects the identity provider.
 * @throws ApiError `validation_error` (422) while the policy is `required`; `not_found` (404) without one.
 */
export async function disconnectProvider(member: SignedInMember): Promise<void> {
  const orgId = member.org.id;
  await transaction(async () => {
    const policy = await ssoPolicyOf(orgId);
    if (policy.mode === "required") {
      throw new ApiError("validation_error", "Single sign-on is required: switch the policy to optional or off first");
    }
    const removed = await prisma().ssoProvider.deleteMany({ where: { orgId } });
    if (removed.count === 0) throw new ApiError("not_found", "No identity provider is connected");
    await recordSettingsAudit(orgId, actorOf(member), { action: "sso.providerRemoved" });
  });
}

/** The policy as the page saves it (docs/api-contract.md §11.3). */
export const SsoPolicyInputSchema = z.object({
  mode: z.enum(SSO_MODES),
  jit: z.boolean(),
  defaultRole: z.enum(["admin", "developer", "viewer"]),
  groupsClaim: z
    .string()
    .trim()
    .min(1)
    .max(256)
    .regex(/^[^\s]+$/, "no spaces"),
  groupRoles: z.array(GroupRoleRuleSchema).max(GROUP_ROLE_RULES_MAX),
  /** While `required`: password and passkey sign-ins still work until then (at most 90 days ahead). */
  graceUntil: z.coerce.date().nullable(),
});

/**
 * Saves the policy; saving also ends an operator's switch-off. `required` needs a connected provider and every listed
 * domain verified, each looked up again now.
 * @throws ApiError `validation_error` (422) for `required` without a provider or with a domain that does not verify,
 *         a grace period in the past or beyond 90 days, or a rule giving owner.
 */
export async function saveSsoPolicy(member: SignedInMember, input: z.infer<typeof SsoPolicyInputSchema>) {
  const orgId = member.org.id;
  if (input.graceUntil) {
    const ahead = input.graceUntil.getTime() - Date.now();
    if (ahead <= 0 || ahead > 90 * 24 * 60 * 60 * 1000) {
      throw new ApiError("validation_error", "The grace period must end within the next 90 days", {
        details: [{ path: ["graceUntil"], message: "must be in the next 90 days" }],
      });
    }
  }
  if (input.mode === "required") {
    const provider = await prisma().ssoProvider.count({ where: { orgId } });
    if (provider === 0) throw new ApiError("validation_error", "Connect an identity provider before requiring it");
    const domains = await listSsoDomains(orgId);
    if (domains.length === 0) throw new ApiError("validation_error", "Verify at least one domain before requiring SSO");
    const failed: string[] = [];
    for (const domain of domains) {
      const checked = await verifySsoDomain(orgId, domain.domain);
      if (!checked.verified) failed.push(`${domain.domain}: ${checked.lastError}`);
    }
    if (failed.length > 0) {
      throw new ApiError("validation_error", `Every domain must verify before SSO is required: ${failed.join("; ")}`);
    }
  }
  const previous = await ssoPolicyOf(orgId);
  const data = {
    mode: input.mode,
    jit: input.jit,
    defaultRole: input.defaultRole,
    groupsClaim: input.groupsClaim,
    groupRoles: input.groupRoles,
    graceUntil: input.mode === "required" ? input.graceUntil : null,
    enforcementSuspendedAt: null,
  };
  await transaction(async () => {
    await prisma().ssoPolicy.upsert({ where: { orgId }, create: { orgId, ...data }, update: data });
    await recordSettingsAudit(orgId, actorOf(member), {
      action: "sso.policyChanged",
      details: {
        mode: input.mode,
        previousMode: previous.mode,
        jit: input.jit,
        defaultRole: input.defaultRole,
        rules: input.groupRoles.length,
        graceUntil: data.graceUntil?.toISOString() ?? null,
      },
    });
  });
  return ssoPolicyOf(orgId);
}

/**
 * Names an owner break-glass (or no longer): owners only; a break-glass owner must have a second factor.
 * @throws ApiError `insufficient_scope` (403) for anyone but an owner; `not_found` (404) for a member who is not an
 *         owner of the organisation; `validation_error` (422) for an owner without a second factor.
 */
export async function setBreakGlass(member: SignedInMember, memberId: string, breakGlass: boolean): Promise<void> {
  if (member.role !== "owner") throw new ApiError("insufficient_scope", "Only an owner can name break-glass owners");
  const target = await prisma().member.findFirst({
    where: { id: memberId, orgId: member.org.id, role: "owner" },
    select: {
      id: true,
      user: { select: { email: true, twoFactorEnabled: true, _count: { select: { passkeys: true } } } },
    },
  });
  if (!target) throw new ApiError("not_found", "No owner of this organisation has that id");
  if (breakGlass && !target.user.twoFactorEnabled && target.user._count.passkeys === 0) {
    throw new ApiError(
      "validation_error",
      `${target.user.email} needs an authenticator app or a passkey before being a break-glass owner`,
    );
  }
  await transaction(async () => {
    await prisma().member.update({ where: { id: target.id }, data: { breakGlass } });
    await recordSettingsAudit(member.org.id, actorOf(member), {
      action: "sso.policyChanged",
      target: target.user.email,
      details: { breakGlass },
    });
  });
}

/**
 * Starts "Test the connection": the browser then starts a sign-in through the provider (`POST
 * /api/auth/sign-in/sso` with `providerId` and `callbackURL`, so better-auth's state cookie is its own), whose answer
 * is recorded and shown on the page instead of signing anyone in or changing any membership: the provider sends the
 * browser back to `callbackURL`, where {@link connectionTestResult} reads what came.
 * @returns `{ nonce, providerId, callbackURL }`.
 * @throws ApiError `validation_error` (422) without a provider or a verified domain.
 */
export async function startConnectionTest(
  member: SignedInMember,
): Promise<{ nonce: string; providerId: string; callbackURL: string }> {
  const orgId = member.org.id;
  const provider = await prisma().ssoProvider.findUnique({
    where: { orgId },
    select: { providerId: true, domainVerified: true },
  });
  if (!provider) throw new ApiError("validation_error", "Connect an identity provider first");
  if (!provider.domainVerified) throw new ApiError("validation_error", "Verify a domain first");
  const nonce = await openConnectionTest(orgId, member.user.id);
  await recordSettingsAudit(orgId, actorOf(member), { action: "sso.connectionTested" });
  return { nonce, providerId: provider.providerId, callbackURL: connectionTestCallback(nonce) };
}

/** Whether the member's organisation's team roles are managed by the identity provider (a group → role map exists). */
export async function rolesManagedByIdp(orgId: string): Promise<boolean> {
  const policy = await ssoPolicyOf(orgId);
  return policy.mode !== "off" && policy.groupRoles.length > 0;
}

/**
 * The operator's switch-off (`npm run admin -- sso-enforcement-off --org <slug>`, docs/api-contract.md §11.3): the
 * organisation's `required` policy stops being enforced (its mode is kept, the page shows a banner) until an owner or
 * admin saves the policy again. Recorded in the organisation's audit trail.
 * @returns the policy's mode, and whether enforcement was on before.
 * @throws ApiError `not_found` (404) for an organisation without an SSO policy.
 */
export async function suspendSsoEnforcement(orgId: string): Promise<{ mode: string; wasEnforced: boolean }> {
  return transaction(async () => {
    const policy = await prisma().ssoPolicy.findUnique({ where: { orgId } });
    if (!policy) throw new ApiError("not_found", "This organisation has no single sign-on policy");
    const wasEnforced = policy.mode === "required" && policy.enforcementSuspendedAt === null;
    await prisma().ssoPolicy.update({ where: { orgId }, data: { enforcementSuspendedAt: new Date() } });
    await recordSettingsAudit(
      orgId,
      { userId: null, email: "operator (npm run admin)", ip: null, userAgent: null },
      { action: "sso.enforcementSuspended", details: { mode: policy.mode, wasEnforced } },
    );
    return { mode: policy.mode, wasEnforced };
  });
}
