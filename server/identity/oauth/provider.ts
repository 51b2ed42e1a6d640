// The OAuth 2.1 authorization server of the MCP endpoint (docs/api-contract.md §10.6; docs/architecture.md, "The MCP
// server"): better-auth's MCP preset of its OAuth provider, with the `jwt` plugin signing access tokens. Configured
// here, installed by server/identity/better-auth.ts on every origin's instance. A consent always goes through our
// settings page (server/identity/oauth/connections.ts), which creates the API key the connection acts as: the key's
// id travels as the consent's, the code's and the tokens' `referenceId`, and as a claim of every access token.
import { AsyncLocalStorage } from "node:async_hooks";
import { cimd } from "@better-auth/cimd";
import { fetchClientMetadataResource } from "@better-auth/cimd/node";
import { mcp } from "@better-auth/mcp";
import { APIError } from "better-auth/api";
import { jwt } from "better-auth/plugins";
import { SCOPES } from "../../platform/api-keys/scopes";

/** Where the plugin sends a browser that must sign in first: our sign-in page, which goes on to the consent page. */
export const OAUTH_LOGIN_PAGE = "/signin";

/** The settings page where a member connects a client (names it, picks an organisation and scopes). */
export const OAUTH_CONSENT_PAGE = "/settings/connect";

/** The claim of an access token naming the API key the connection acts as. */
export const KEY_CLAIM = "msp_key";

/** The scope a client asks for to get a refresh token besides the access token. */
export const OFFLINE_SCOPE = "offline_access";

/** Access tokens live 1 hour (3,600 s); refresh tokens 30 days, rotated at each use. */
export const ACCESS_TOKEN_TTL_SECONDS = 60 * 60;

/** Every scope a client may ask for: the API's scopes (docs/api-contract.md §5) and `offline_access`. */
export const OAUTH_SCOPES: string[] = [...Object.keys(SCOPES), OFFLINE_SCOPE];

/** The MCP endpoint of an origin: the resource (RFC 8707) every access token of that origin is bound to. */
export function mcpResourceOf(origin: string): string {
  return `${origin.replace(/\/+$/, "")}/mcp`;
}

/** Where RFC 9728 puts the metadata of the resource `<origin>/mcp`. */
export const PROTECTED_RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/mcp";

/** The URL of the protected-resource metadata of `origin`'s `/mcp`, which a 401 of `/mcp` names (RFC 9728 §5.1). */
export function resourceMetadataUrl(origin: string): string {
  return `${origin.replace(/\/+$/, "")}${PROTECTED_RESOURCE_METADATA_PATH}`;
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Whether clients can connect to `origin` with OAuth: the MCP specification (and the library) accept an authorization
 * server and a resource on https only, or on http at a loopback address (development). On a plain-http public name,
 * `/mcp` takes API keys alone.
 */
export function oauthAvailableFor(origin: string): boolean {
  try {
    const url = new URL(origin);
    return url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url.hostname));
  } catch {
    return false;
  }
}

// The key a consent being recorded stands for, set by the consent service around the plugin's consent endpoint. One
// per process, as the better-auth instances are (Next.js bundles a copy of this module beside dist/serve.js's).
const holder = globalThis as unknown as { __crmOAuthConsentKey?: AsyncLocalStorage<string> };
holder.__crmOAuthConsentKey ??= new AsyncLocalStorage<string>();
const consentKey = holder.__crmOAuthConsentKey;

/** Runs `work` (the plugin's consent endpoint) with the id of the API key the consent creates the connection for. */
export function withConnectionKey<T>(apiKeyId: string, work: () => Promise<T>): Promise<T> {
  return consentKey.run(apiKeyId, work);
}

// Outside our consent no key stands for the request: a reference no consent has, so the plugin never finds an earlier
// consent to skip the page with, and every authorization goes through the member's choice of organisation and scopes.
const NO_CONNECTION = "consent-required";

/**
 * The OAuth plugins of one origin's better-auth instance: `jwt` (access tokens signed with EdDSA keys kept in the
 * `Jwks` table, issuer the origin itself so RFC 8414 metadata sits at the origin's root) and the MCP preset (resource
 * `<origin>/mcp`, PKCE, dynamic registration open to anyone, counted by our plugin in the address's anonymous window)
 * and Client ID Metadata Documents (`cimd`: a client whose `client_id` is an https URL is described by the document
 * there, fetched by the library's Node transport, which resolves the name once, refuses private and special-use
 * addresses and follows no redirect).
 * An origin {@link oauthAvailableFor} refuses gets the same plugins bound to a loopback placeholder its routes never
 * serve (server/mcp/oauth-http.ts answers 404 there), so every instance has one type.
 */
export function oauthPlugins(origin: string) {
  const resource = oauthAvailableFor(origin) ? mcpResourceOf(origin) : "http://127.0.0.1/mcp";
  const issuer = oauthAvailableFor(origin) ? origin.replace(/\/+$/, "") : "http://127.0.0.1";
  return [
    jwt({ jwt: { issuer }, disableSettingJwtHeader: true }),
    mcp({
      resource,
      loginPage: OAUTH_LOGIN_PAGE,
      consentPage: OAUTH_CONSENT_PAGE,
      scopes: OAUTH_SCOPES,
      clientRegistrationDefaultScopes: OAUTH_SCOPES,
      allowDynamicClientRegistration: true,
      allowUnauthenticatedClientRegistration: true,
      accessTokenExpiresIn: ACCESS_TOKEN_TTL_SECONDS,
      // Registrations count in the address's anonymous window (our plugin), configurable with the other anonymous
      // requests; the provider's own 5 a minute per address would refuse a hosted client (Claude.ai registers from
      // a few addresses for all its users) long before.
      rateLimit: { register: false },
      postLogin: {
        page: OAUTH_CONSENT_PAGE,
        shouldRedirect: () => false,
        consentReferenceId: () => consentKey.getStore() ?? NO_CONNECTION,
      },
      customAccessTokenClaims: ({ referenceId }) => {
        // A token is only ever issued from a code or refresh token our consent made, which carry the key's id.
        if (!referenceId || referenceId === NO_CONNECTION) {
          throw new APIError("BAD_REQUEST", { error: "invalid_grant", error_description: "No connection" });
        }
        return { [KEY_CLAIM]: referenceId };
      },
    }),
    cimd({ fetchClientMetadataResource, metadataProfile: "mcp-2026-07-28" }),
  ] as const;
}
