import { z } from "zod";
import { orgProcedure, router } from "../../settings/trpc";
import { recordSettingsAudit } from "../audit-trail/service";
import { actorOf } from "../session";
import { addSsoDomain, removeSsoDomain, verifySsoDomain } from "./domains";
import {
  connectOidc,
  connectSaml,
  disconnectProvider,
  OidcConnectionSchema,
  SamlConnectionSchema,
  SsoPolicyInputSchema,
  saveSsoPolicy,
  setBreakGlass,
  ssoOverview,
  startConnectionTest,
} from "./settings";
import { connectionTestResult } from "./sign-in";

const DomainSchema = z.object({ domain: z.string().trim().min(1).max(253) });

/**
 * Single sign-on of the member's organisation (docs/api-contract.md §11): owners and admins (`organization:update`)
 * see and change it, every change after a recent sign-in (step-up, 403 otherwise); break-glass owners are named by
 * owners. Errors: 403 `insufficient_scope`, 404 `not_found`, 409 `conflict` (a domain another organisation verified),
 * 422 `validation_error` (the field, or the plugin's reason).
 */
export const ssoRouter = router({
  /** The page: provider (never its secret), URLs to give the IdP, domains with their TXT records, policy, owners. */
  overview: orgProcedure("organization:update").query(({ ctx }) => ssoOverview(ctx.member)),

  /** Connects or replaces the OIDC provider (discovery, PKCE). */
  connectOidc: orgProcedure("organization:update", { stepUp: true })
    .input(OidcConnectionSchema)
    .mutation(async ({ ctx, input }) => {
      await connectOidc(ctx.member, input);
      return { connected: "oidc" as const };
    }),

  /** Connects or replaces the SAML provider from its metadata XML (≤ 100 KiB). */
  connectSaml: orgProcedure("organization:update", { stepUp: true })
    .input(SamlConnectionSchema)
    .mutation(async ({ ctx, input }) => {
      await connectSaml(ctx.member, input);
      return { connected: "saml" as const };
    }),

  /** Disconnects the provider (not while required). */
  disconnect: orgProcedure("organization:update", { stepUp: true }).mutation(async ({ ctx }) => {
    await disconnectProvider(ctx.member);
    return { disconnected: true as const };
  }),

  /** Adds a domain to verify: `{ domain, txtName, txtValue, … }`. */
  addDomain: orgProcedure("organization:update", { stepUp: true })
    .input(DomainSchema)
    .mutation(async ({ ctx, input }) => {
      const domain = await addSsoDomain(ctx.member.org.id, input.domain);
      await recordSettingsAudit(ctx.member.org.id, actorOf(ctx.member), {
        action: "sso.domainAdded",
        target: domain.domain,
      });
      return domain;
    }),

  /** Looks the domain's TXT record up now: the domain with `verified` or `lastError`. */
  verifyDomain: orgProcedure("organization:update")
    .input(DomainSchema)
    .mutation(async ({ ctx, input }) => {
      const domain = await verifySsoDomain(ctx.member.org.id, input.domain);
      if (domain.verified) {
        await recordSettingsAudit(ctx.member.org.id, actorOf(ctx.member), {
          action: "sso.domainVerified",
          target: domain.domain,
        });
      }
      return domain;
    }),

  /** Removes a domain. */
  removeDomain: orgProcedure("organization:update", { stepUp: true })
    .input(DomainSchema)
    .mutation(async ({ ctx, input }) => {
      await removeSsoDomain(ctx.member.org.id, input.domain);
      await recordSettingsAudit(ctx.member.org.id, actorOf(ctx.member), {
        action: "sso.domainRemoved",
        target: input.domain,
      });
      return { domain: input.domain, removed: true as const };
    }),

  /** Saves the policy (mode, JIT, default role, groups claim, ordered map, grace period): the policy saved. */
  savePolicy: orgProcedure("organization:update", { stepUp: true })
    .input(SsoPolicyInputSchema)
    .mutation(({ ctx, input }) => saveSsoPolicy(ctx.member, input)),

  /** Names an owner break-glass, or no longer (owners only; the owner needs a second factor). */
  setBreakGlass: orgProcedure("organization:update", { stepUp: true })
    .input(z.object({ memberId: z.string().min(1).max(64), breakGlass: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      await setBreakGlass(ctx.member, input.memberId, input.breakGlass);
      return input;
    }),

  /** Starts a connection test: `{ url, nonce }`; the browser goes to `url`. */
  startTest: orgProcedure("organization:update").mutation(({ ctx }) => startConnectionTest(ctx.member)),

  /** What the test `nonce` received (null until the identity provider answered, or for someone else's test). */
  testResult: orgProcedure("organization:update")
    .input(z.object({ nonce: z.string().min(1).max(64) }))
    .query(({ ctx, input }) => connectionTestResult(ctx.member.org.id, ctx.member.user.id, input.nonce)),
});
