// @better-auth/sso as this service uses it (docs/api-contract.md §11, docs/architecture.md "Single sign-on and
// provisioning"): the protocols are the plugin's, the policy ours. Providers are written only by the settings
// procedures (server/identity/sso/settings.ts), never through the plugin's own HTTP paths (SSO_DISABLED_PATHS); every
// sign-in goes through resolveSsoUser; SAML answers must be signed, solicited, fresh and used once.
import { sso } from "@better-auth/sso";
import { resolveSsoUser } from "./sign-in";

/**
 * The plugin's paths nobody may call over HTTP: providers and their domains are managed by our procedures, which check
 * roles, step-up and audit (docs/api-contract.md §11.1).
 */
export const SSO_DISABLED_PATHS = [
  "/sso/register",
  "/sso/update-provider",
  "/sso/delete-provider",
  "/sso/providers",
  "/sso/get-provider",
  "/sso/request-domain-verification",
  "/sso/verify-domain",
];

/** Paths whose new session is an SSO sign-in (`:providerId` the provider's id). */
export const SSO_SIGN_IN_PATHS = new Set([
  "/sso/callback/:providerId",
  "/sso/callback",
  "/sso/saml2/sp/acs/:providerId",
]);

/** SAML clock-skew tolerance on NotBefore/NotOnOrAfter: 5 minutes, in ms (docs/api-contract.md §11.1). */
export const SAML_CLOCK_SKEW_MS = 5 * 60 * 1000;

/** The provider id of an organisation's identity provider: `sso-<organisation id>`. */
export function providerIdOf(orgId: string): string {
  return `sso-${orgId}`;
}

/** The plugin, configured: see the file header. */
export function ssoPlugin() {
  return sso({
    providersLimit: 1,
    schema: { ssoProvider: { fields: { organizationId: "orgId" } } },
    // Our own domain verification sets `domainVerified` (server/identity/sso/domains.ts); the plugin refuses to start
    // a sign-in through a provider without it.
    domainVerification: { enabled: true },
    organizationProvisioning: { disabled: true },
    resolveUser: (input) => resolveSsoUser(input),
    trustEmailVerified: false,
    saml: {
      enableInResponseToValidation: true,
      allowIdpInitiated: false,
      clockSkew: SAML_CLOCK_SKEW_MS,
      requireTimestamps: true,
      algorithms: { onDeprecated: "reject" },
    },
  });
}
