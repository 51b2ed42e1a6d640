// OAuth connections (docs/api-contract.md §10.6; docs/architecture.md, "The MCP server"): a member's consent to a client
// such as Claude.ai, for one organisation and some scopes, is an API key of that organisation the member creates, whose
// raw key nobody ever sees; the client's access tokens name that key, so everything a key's request goes through (scopes,
// rate limits, idempotency, the request log, events' actor, revocation within a second) holds for them unchanged.
import { createLocalJWKSet, type JWTVerifyGetKey, errors as joseErrors, jwtVerify } from "jose";
import { outsideTransaction, prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { keyRecognition } from "../../platform/api-keys/recognition";
import { SCOPES, validateRequestedScopes } from "../../platform/api-keys/scopes";
import {
  type ApiKeyPrincipal,
  type ApiKeySummary,
  authenticateConnectionKey,
  createApiKey,
  getApiKey,
  revokeApiKey,
} from "../../platform/api-keys/service";
import type { AuditActor } from "../audit-trail/service";
import { AUTH_BASE_PATH, authFor } from "../better-auth";
import { authRefusal } from "../better-auth-errors";
import { KEY_CLAIM, mcpResourceOf, OFFLINE_SCOPE, oauthAvailableFor, withConnectionKey } from "./provider";

/** What the consent page shows of an authorization request. */
export interface ConsentRequest {
  clientId: string;
  /** The name the client registered with (`client_name`), or its id when it gave none. */
  clientName: string;
  /** The host its browser is sent back to with the code (`redirect_uri`'s), which the member can judge. */
  redirectHost: string;
  /** The API scopes the client asked for (all of them when it named none), in table order. */
  scopes: string[];
  /** Whether it asked for a refresh token (`offline_access`). */
  offline: boolean;
}

/**
 * Reads the signed query the authorization endpoint sent the browser to the consent page with: the client (which must
 * exist and must have registered the redirect URI), and the scopes it asked for. The signature itself is checked when
 * the consent is recorded (the plugin's consent endpoint).
 * @throws ApiError `bad_request` (400) when the query is not an authorization request of a registered client, or has
 *   expired (10 minutes after the client started it).
 */
export async function describeConsentRequest(oauthQuery: string): Promise<ConsentRequest> {
  const query = new URLSearchParams(oauthQuery);
  const clientId = query.get("client_id") ?? "";
  const redirectUri = query.get("redirect_uri") ?? "";
  const exp = Number(query.get("exp"));
  if (!clientId || !query.get("sig")) throw new ApiError("bad_request", "This is not an authorization request");
  if (!Number.isFinite(exp) || exp * 1000 < Date.now()) {
    throw new ApiError("bad_request", "This authorization request has expired: start again from the client");
  }
  const client = await prisma().oauthClient.findUnique({
    where: { clientId },
    select: { name: true, redirectUris: true, disabled: true },
  });
  if (!client || client.disabled || !client.redirectUris.includes(redirectUri)) {
    throw new ApiError("bad_request", "The client of this authorization request is unknown");
  }
  const asked = (query.get("scope") ?? "").split(" ").filter(Boolean);
  // The plugin refused unknown scopes before sending the browser here.
  const scopes = Object.keys(SCOPES).filter((scope) => asked.includes(scope));
  return {
    clientId,
    clientName: client.name?.trim() || clientId,
    redirectHost: new URL(redirectUri).host || redirectUri,
    scopes,
    offline: asked.includes(OFFLINE_SCOPE),
  };
}

/** Who connects a client: the member, and how the audit trail names them. */
export interface ConnectingMember {
  orgId: string;
  userId: string;
  origin: string;
  /** The request's headers: the session cookie the plugin's consent endpoint reads. */
  headers: Headers;
  actor: AuditActor;
}

/**
 * Records a member's consent (the caller has checked their role, two-factor and step-up, as for creating a key): in one
 * transaction, revokes the connection this member already had between this client and this organisation, creates the
 * connection's API key (mode and scopes as chosen; its raw key is dropped here), and records the plugin's consent with
 * the key's id as reference, which also issues the authorization code.
 * @returns `{ redirectUrl, key }`: the client's `redirect_uri` with the code (or an OAuth error) the browser goes to.
 * @throws ApiError `bad_request` (400) for an expired or forged request; `validation_error` (422) for no scope, an
 *   unknown one, or one the client did not ask for.
 */
export async function connectClient(
  by: ConnectingMember,
  input: { oauthQuery: string; isTest: boolean; scopes: readonly string[] },
): Promise<{ redirectUrl: string; key: ApiKeySummary }> {
  const request = await describeConsentRequest(input.oauthQuery);
  const scopes = validateRequestedScopes(input.scopes);
  const unasked = scopes.filter((scope) => !request.scopes.includes(scope));
  if (unasked.length > 0) {
    throw new ApiError("validation_error", `${request.clientName} did not ask for ${unasked.join(", ")}`, {
      details: [{ path: ["scopes"], message: `Not asked for: ${unasked.join(", ")}` }],
    });
  }
  // createApiKey inside a transaction needs the key format's secret read before it opens.
  await keyRecognition();
  return transaction(async () => {
    const earlier = await prisma().apiKey.findMany({
      where: { orgId: by.orgId, oauthClientId: request.clientId, createdById: by.userId, revokedAt: null },
      select: { id: true },
    });
    for (const key of earlier) await endConnection(by.orgId, key.id, by.actor);
    const { key } = await createApiKey(
      by.orgId,
      {
        name: `${request.clientName} (connected app)`.slice(0, 100),
        scopes,
        isTest: input.isTest,
        oauthClientId: request.clientId,
      },
      { createdById: by.userId, actor: by.actor },
    );
    const granted = [...scopes, ...(request.offline ? [OFFLINE_SCOPE] : [])].join(" ");
    const answer = await withConnectionKey(key.id, () =>
      consentCall(by, { accept: true, scope: granted, oauth_query: input.oauthQuery }),
    );
    const redirectUrl = answer.url ?? answer.redirect_uri;
    if (!redirectUrl) throw new Error("The OAuth consent endpoint answered without a redirect");
    return { redirectUrl, key };
  });
}

/**
 * Tells the client the member declined: the plugin's consent endpoint with `accept: false`.
 * @returns the client's `redirect_uri` with `error=access_denied`.
 */
export async function declineClient(by: Pick<ConnectingMember, "origin" | "headers">, oauthQuery: string) {
  const answer = await consentCall(by, { accept: false, oauth_query: oauthQuery });
  return { redirectUrl: answer.url ?? answer.redirect_uri ?? "/settings" };
}

/**
 * The plugin's consent endpoint, called as the member's browser would (its cookie, this origin): the endpoint runs
 * the authorization again, which needs a request, so it cannot be called as a plain function.
 * @throws ApiError for its refusals (`viaAuth`'s statuses: 401 without a session, 400 for a forged or expired query).
 */
async function consentCall(
  by: Pick<ConnectingMember, "origin" | "headers">,
  body: { accept: boolean; scope?: string; oauth_query: string },
): Promise<{ url?: string; redirect_uri?: string }> {
  const headers = new Headers(by.headers);
  headers.set("content-type", "application/json");
  headers.set("accept", "application/json");
  headers.set("origin", by.origin);
  headers.delete("content-length");
  const response = await authFor(by.origin).handler(
    new Request(`${by.origin}${AUTH_BASE_PATH}/oauth2/consent`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    }),
  );
  const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) {
    const message = answer.message ?? answer.error_description;
    const refusal = authRefusal({ statusCode: response.status, body: { ...answer, message } });
    throw refusal ?? new Error(`The OAuth consent endpoint answered ${response.status}`);
  }
  return answer as { url?: string; redirect_uri?: string };
}

async function endConnection(orgId: string, keyId: string, actor: AuditActor): Promise<void> {
  await revokeApiKey(orgId, keyId, actor);
  // The key's revocation already refuses its tokens (they are checked against the key); these end the plugin's side:
  // no refresh, and the next authorization asks for consent again.
  await prisma().oauthConsent.deleteMany({ where: { referenceId: keyId } });
  await prisma().oauthRefreshToken.updateMany({
    where: { referenceId: keyId, revoked: null },
    data: { revoked: new Date() },
  });
  await prisma().oauthAccessToken.deleteMany({ where: { referenceId: keyId } });
}

/** A connected client as the settings list it. */
export interface ConnectionView {
  /** The id of the connection's API key: what Revoke names. */
  keyId: string;
  clientId: string;
  clientName: string;
  /** The hosts the client's browser returns to (its redirect URIs'). */
  redirectHosts: string[];
  scopes: string[];
  isTest: boolean;
  createdAt: Date;
  /** The last request of any of its tokens (the key's `lastUsedAt`, refreshed at most once a minute). */
  lastUsedAt: Date | null;
  createdBy: { id: string; email: string; name: string } | null;
}

function hostOf(uri: string): string {
  try {
    return new URL(uri).host || uri;
  } catch {
    return uri;
  }
}

/** The organisation's connected clients that still work, newest first. */
export async function listConnections(orgId: string): Promise<ConnectionView[]> {
  const keys = await prisma().apiKey.findMany({
    where: { orgId, oauthClientId: { not: null }, revokedAt: null },
    select: {
      id: true,
      oauthClientId: true,
      scopes: true,
      isTest: true,
      createdAt: true,
      lastUsedAt: true,
      createdBy: { select: { id: true, email: true, name: true } },
    },
    orderBy: { createdAt: "desc" },
  });
  const clientIds = [...new Set(keys.map((key) => key.oauthClientId as string))];
  const clients = await prisma().oauthClient.findMany({
    where: { clientId: { in: clientIds } },
    select: { clientId: true, name: true, redirectUris: true },
  });
  const byId = new Map(clients.map((client) => [client.clientId, client]));
  return keys.map((key) => {
    const clientId = key.oauthClientId as string;
    const client = byId.get(clientId);
    return {
      keyId: key.id,
      clientId,
      clientName: client?.name?.trim() || clientId,
      redirectHosts: [...new Set((client?.redirectUris ?? []).map(hostOf))],
      scopes: key.scopes,
      isTest: key.isTest,
      createdAt: key.createdAt,
      lastUsedAt: key.lastUsedAt,
      createdBy: key.createdBy,
    };
  });
}

/**
 * Revokes a connection: its key (the next request of any of its tokens gets 401, on every instance within 0.5 s),
 * its refresh tokens and its consent, with an `apiKey.revoked` audit entry.
 * @throws ApiError `not_found` (404) when the key is not an active connection of the organisation.
 */
export async function revokeConnection(orgId: string, keyId: string, actor: AuditActor): Promise<void> {
  const key = await getApiKey(orgId, keyId);
  if (!key.oauthClientId || key.revokedAt) throw new ApiError("not_found", `Connection ${keyId} not found`);
  await transaction(() => endConnection(orgId, keyId, actor));
}

/**
 * Revokes every connection a member made in an organisation (their removal, §10.6): a connection is the member's own
 * authorization of a client, so unlike the keys they created for the organisation it does not outlive their
 * membership. Each ends as {@link revokeConnection} ends one, with its audit entry.
 * @returns how many connections were revoked.
 */
export async function revokeConnectionsCreatedBy(orgId: string, userId: string, actor: AuditActor): Promise<number> {
  const keys = await prisma().apiKey.findMany({
    where: { orgId, createdById: userId, oauthClientId: { not: null }, revokedAt: null },
    select: { id: true },
  });
  for (const key of keys) await endConnection(orgId, key.id, actor);
  return keys.length;
}

interface JwksEntry {
  keys: JWTVerifyGetKey;
  fetchedAt: number;
}

const JWKS_TTL_MS = 5 * 60_000;
const jwksHolder = globalThis as unknown as { __crmOAuthJwks?: Map<string, JwksEntry> };

async function signingKeys(origin: string, fresh: boolean): Promise<JWTVerifyGetKey> {
  jwksHolder.__crmOAuthJwks ??= new Map();
  const known = jwksHolder.__crmOAuthJwks.get(origin);
  if (known && !fresh && Date.now() - known.fetchedAt < JWKS_TTL_MS) return known.keys;
  // Read outside the request's transaction: the first read creates the signing key, which must outlive the request.
  const set = (await outsideTransaction(() => authFor(origin).api.getJwks())) as Parameters<
    typeof createLocalJWKSet
  >[0];
  const entry = { keys: createLocalJWKSet(set), fetchedAt: Date.now() };
  jwksHolder.__crmOAuthJwks.set(origin, entry);
  return entry.keys;
}

/** Whether a bearer token has the shape of a JWT (three base64url parts) rather than of an API key. */
export function looksLikeJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
}

/**
 * The principal of an OAuth access token presented to `<origin>/mcp`: a JWT signed by this origin's keys (`/jwks`),
 * issued by the origin, for the audience `<origin>/mcp` (RFC 8707: a token for any other resource is refused, never
 * passed on), unexpired, naming a connection's key that still works ({@link authenticateConnectionKey}).
 * @returns the key's principal, exactly as for the raw key.
 * @throws ApiError `unauthorized` (401) for any token that fails one of those checks; the database error when the
 *   key's lookup fails.
 */
export async function principalOfAccessToken(origin: string, token: string): Promise<ApiKeyPrincipal> {
  const invalid = (why: string) => new ApiError("unauthorized", `Invalid access token: ${why}`);
  if (!oauthAvailableFor(origin)) throw invalid("this server takes API keys only (OAuth needs https)");
  const options = { issuer: origin, audience: mcpResourceOf(origin) };
  let payload: Record<string, unknown>;
  try {
    payload = (await jwtVerify(token, await signingKeys(origin, false), options)).payload;
  } catch (error) {
    if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw invalid(reason(error));
    // A key made since the set was read (rotation, another instance's first token): read the set once more.
    try {
      payload = (await jwtVerify(token, await signingKeys(origin, true), options)).payload;
    } catch (again) {
      throw invalid(reason(again));
    }
  }
  const keyId = payload[KEY_CLAIM];
  if (typeof keyId !== "string" || keyId.length === 0 || keyId.length > 64) throw invalid("it names no connection");
  return authenticateConnectionKey(keyId);
}

function reason(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return "it has expired";
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    return error.claim === "aud" ? "it is for another resource" : `its ${error.claim} claim is not this server's`;
  }
  return "its signature does not verify";
}
