// The OAuth doors of the MCP endpoint (docs/api-contract.md §10.6; docs/architecture.md, "The MCP server"), served on
// node:http before Next.js as `/mcp` is: the protected-resource metadata (RFC 9728), the authorization server's
// metadata (RFC 8414) at the origin's root, and the plugin's public endpoints (authorize, token, register, revoke,
// the signing keys). The consent is not among them: it is recorded by the settings' consent page, never by a client.
import type { IncomingMessage, ServerResponse } from "node:http";
import { oauthProviderAuthServerMetadata } from "@better-auth/oauth-provider";
import { buildOAuthProtectedResourceMetadata } from "@modelcontextprotocol/server";
import { newRequestId } from "../http/envelope";
import { headerReader, webRequestOf } from "../http/node";
import { publicOrigin, stampClientAddress } from "../http/origin";
import { AUTH_BASE_PATH, authFor } from "../identity/better-auth";
import {
  mcpResourceOf,
  OAUTH_SCOPES,
  OFFLINE_SCOPE,
  oauthAvailableFor,
  PROTECTED_RESOURCE_METADATA_PATH,
} from "../identity/oauth/provider";
import { deleteRegistration, readRegistration } from "../identity/oauth/registrations";
import { log } from "../observability/logger";
import { observeRequest } from "../observability/requests";

/** Where RFC 8414 puts the authorization server's metadata of an issuer without a path (ours: the origin). */
export const AUTHORIZATION_SERVER_METADATA_PATH = "/.well-known/oauth-authorization-server";

const METADATA_PATHS = new Set([
  PROTECTED_RESOURCE_METADATA_PATH,
  // Clients that probe the root document before the path-suffixed one find the same resource there.
  "/.well-known/oauth-protected-resource",
  AUTHORIZATION_SERVER_METADATA_PATH,
]);

// The plugin's endpoints a client calls; every other better-auth path stays unserved (app/api/auth/[...all]/route.ts).
const CLIENT_PATHS = new Set(
  ["/oauth2/authorize", "/oauth2/token", "/oauth2/register", "/oauth2/revoke", "/jwks"].map(
    (path) => `${AUTH_BASE_PATH}${path}`,
  ),
);

function pathOf(target: string): string {
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

// RFC 7592: `<auth base>/oauth2/register/<client_id>`, read and deleted with the registration's own token.
const REGISTRATION_PREFIX = `${AUTH_BASE_PATH}/oauth2/register/`;

/** Whether a request target is one of the OAuth doors this file answers. */
export function isOAuthTarget(target: string): boolean {
  const path = pathOf(target);
  return METADATA_PATHS.has(path) || CLIENT_PATHS.has(path) || path.startsWith(REGISTRATION_PREFIX);
}

async function manageRegistration(req: IncomingMessage, origin: string, path: string): Promise<Response> {
  const clientId = decodeURIComponent(path.slice(REGISTRATION_PREFIX.length));
  const token = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1] ?? "";
  const refused = () =>
    json(
      401,
      { error: "invalid_token", error_description: "Send the registration_access_token of this client" },
      {
        ...CORS,
        "WWW-Authenticate": 'Bearer error="invalid_token"',
      },
    );
  const authBaseUrl = `${origin}${AUTH_BASE_PATH}`;
  if (req.method === "GET") {
    const registration = await readRegistration(authBaseUrl, clientId, token);
    return registration ? json(200, registration, CORS) : refused();
  }
  if (req.method === "DELETE") {
    return (await deleteRegistration(clientId, token)) ? new Response(null, { status: 204, headers: CORS }) : refused();
  }
  // Changing a registration (PUT) is not offered: a client registers again.
  return json(405, { error: "invalid_request", error_description: "GET or DELETE" }, { ...CORS, Allow: "GET, DELETE" });
}

const CORS = {
  // Browser-based clients (the MCP Inspector) read the documents and call the token and registration endpoints from
  // another origin; none of them uses a cookie.
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
  "Access-Control-Allow-Headers": "Content-Type, Authorization, MCP-Protocol-Version",
  "Access-Control-Max-Age": "600",
};

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store", ...headers },
  });
}

/**
 * Most bytes of a request body the OAuth doors read: a registration's metadata or a token request is a few hundred
 * bytes, and these paths are open to anyone, so a larger body is refused (413) before it is held in memory.
 */
const MAX_OAUTH_BODY_BYTES = 64 * 1024;

const tooLarge = () =>
  json(413, { error: "invalid_request", error_description: `The body exceeds ${MAX_OAUTH_BODY_BYTES} bytes` });

async function answer(req: IncomingMessage): Promise<Response> {
  const read = headerReader(req);
  const origin = publicOrigin(read);
  const path = pathOf(req.url ?? "/");
  if (!oauthAvailableFor(origin)) {
    return json(404, { error: "not_found", error_description: "OAuth needs this server on https (PUBLIC_URL)" });
  }
  if (req.method === "OPTIONS") return new Response(null, { status: 204, headers: CORS });
  const auth = authFor(origin);
  if (path === AUTHORIZATION_SERVER_METADATA_PATH) {
    const request = await webRequestOf(req, `${origin}${path}`, MAX_OAUTH_BODY_BYTES);
    return request ? oauthProviderAuthServerMetadata(auth, { headers: CORS })(request) : tooLarge();
  }
  if (METADATA_PATHS.has(path)) {
    const oauthMetadata = await auth.api.getOAuthServerConfig();
    const metadata = buildOAuthProtectedResourceMetadata({
      oauthMetadata: oauthMetadata as Parameters<typeof buildOAuthProtectedResourceMetadata>[0]["oauthMetadata"],
      resourceServerUrl: new URL(mcpResourceOf(origin)),
      scopesSupported: OAUTH_SCOPES.filter((scope) => scope !== OFFLINE_SCOPE),
      resourceName: "MSP CRM",
      dangerouslyAllowInsecureIssuerUrl: origin.startsWith("http:"),
    });
    return json(200, metadata, { ...CORS, "Cache-Control": "public, max-age=3600" });
  }
  if (path.startsWith(REGISTRATION_PREFIX)) return manageRegistration(req, origin, path);
  // better-auth's rate limits and our registration window count the address the listener stamped.
  stampClientAddress(req.headers, req.socket.remoteAddress ?? null);
  const request = await webRequestOf(req, `${origin}${req.url ?? path}`, MAX_OAUTH_BODY_BYTES);
  if (!request) return tooLarge();
  const response = await auth.handler(request);
  if (path === `${AUTH_BASE_PATH}/oauth2/authorize`) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(CORS)) headers.set(name, value);
  return new Response(response.body, { status: response.status, headers });
}

/**
 * The node:http listener of the OAuth doors (`npm start`, scripts/serve.ts; the tests' server): answers 404 on an
 * origin OAuth cannot serve (plain http on a public name), else the metadata documents or better-auth's endpoint.
 * Never throws.
 */
export function oauthListener(req: IncomingMessage, res: ServerResponse): void {
  const read = headerReader(req);
  const requestId = newRequestId();
  // Observed like every request: a request id, one log line under the path (these paths are fixed), the metric.
  const observation = observeRequest(requestId, req.method ?? "GET", read);
  const route = routeOf(pathOf(req.url ?? "/"));
  observation
    .run(() => answer(req))
    .catch((error: unknown) => {
      log().error({ requestId, err: error, path: route }, "OAuth request failed; answered 500");
      return json(500, { error: "server_error", error_description: "Internal error" });
    })
    .then(async (response) => {
      res.statusCode = response.status;
      response.headers.forEach((value, name) => {
        if (name !== "set-cookie") res.setHeader(name, value);
      });
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) res.setHeader("Set-Cookie", cookies);
      res.setHeader("X-Request-Id", requestId);
      res.end(Buffer.from(await response.arrayBuffer()));
      observation.end({ route, status: response.status });
    })
    .catch(() => res.destroy());
}

/** The route a log line names: the path, with a registration's client id as a parameter. */
function routeOf(path: string): string {
  return path.startsWith(REGISTRATION_PREFIX) ? `${REGISTRATION_PREFIX}{clientId}` : path;
}
