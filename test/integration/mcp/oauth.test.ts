// OAuth 2.1 for MCP clients (docs/api-contract.md §10.6) as a client such as Claude.ai sees it, against the real
// PostgreSQL and Redis: discovery from the 401's challenge, the metadata documents, dynamic registration, PKCE, the
// member's consent (through the settings procedure the consent page calls), the token, the MCP endpoint with it, and
// what refuses a token: another audience, a revoked connection, a role's limits, step-up.
const REDIRECT_URI = "https://claude.ai/api/mcp/auth_callback";

import { createHash, randomBytes } from "node:crypto";
import { request } from "node:http";
import {
  type CallToolResult,
  Client,
  type OAuthClientProvider,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { authFor } from "../../../server/identity/better-auth";
import { KEY_CLAIM } from "../../../server/identity/oauth/provider";
import { activeKeysCreatedBy } from "../../../server/platform/api-keys/service";
import { auditWritten } from "../../../server/platform/request-log/record";
import { createSettingsCaller } from "../../../server/settings/router";
import { startApi, type TestServer } from "../../helpers/api";
import { addMember, ageSession, memberIdOf, orgWithRoles, type TestMember } from "../../helpers/members";

// Client ID Metadata Documents are fetched from the internet, which tests do not reach: the library's transport answers
// with the document of a client at CIMD_CLIENT_ID, and 404 elsewhere.
const CIMD_CLIENT_ID = "https://agent.example.com/oauth/client-metadata.json";
vi.mock("@better-auth/cimd/node", () => ({
  fetchClientMetadataResource: async (input: RequestInfo | URL) =>
    String(input) === CIMD_CLIENT_ID
      ? Response.json({
          client_id: CIMD_CLIENT_ID,
          client_name: "Agent by URL",
          redirect_uris: [REDIRECT_URI],
          token_endpoint_auth_method: "none",
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
        })
      : new Response("not found", { status: 404 }),
}));

let server: TestServer;
let origin: string;
let team: Awaited<ReturnType<typeof orgWithRoles>>;

beforeAll(async () => {
  server = await startApi();
  origin = new URL(server.mcpUrl).origin;
  team = await orgWithRoles();
});
afterAll(() => server.close());

/** The settings caller of a member, on the test server's origin (the better-auth instance that serves its OAuth). */
function callerOf(member: TestMember) {
  return createSettingsCaller({ request: { ...member.request, origin } });
}

function challengeOf(header: string | null): Record<string, string> {
  return Object.fromEntries([...(header ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1], match[2]]));
}

async function postMcp(token: string | null, body: unknown = { jsonrpc: "2.0", id: 1, method: "tools/list" }) {
  return fetch(server.mcpUrl, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2025-11-25",
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

async function register(name = "Claude (test)") {
  const response = await fetch(`${origin}/api/auth/oauth2/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** An authorization request with PKCE: where the authorization endpoint sends the browser, and the verifier. */
async function authorize(clientId: string, scope: string, cookie?: string) {
  const verifier = randomBytes(32).toString("base64url");
  const state = randomBytes(8).toString("hex");
  const url = new URL(`${origin}/api/auth/oauth2/authorize`);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope,
    state,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    resource: `${origin}/mcp`,
  }).toString();
  const response = await navigate(url, cookie);
  const location = new URL(response.location ?? "", origin);
  return { status: response.status, location, verifier, state };
}

/**
 * A browser's navigation to `url` (node:http: fetch always says `Sec-Fetch-Mode: cors`, which the endpoint answers
 * with JSON instead of a redirect): its status and `Location`.
 */
function navigate(url: URL, cookie?: string) {
  return new Promise<{ status: number; location?: string }>((resolve, reject) => {
    const req = request(
      url,
      { headers: { "Sec-Fetch-Mode": "navigate", Accept: "text/html", ...(cookie ? { Cookie: cookie } : {}) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, location: res.headers.location }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function token(params: Record<string, string>) {
  const response = await fetch(`${origin}/api/auth/oauth2/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

/** The whole flow for `member`: register, authorize, consent, token. */
async function connect(member: TestMember, scopes: string[], mode: "live" | "test" = "live") {
  const { body: client } = await register();
  const clientId = client.client_id as string;
  const asked = await authorize(
    clientId,
    [...scopes, "offline_access"].join(" "),
    member.request.headers.get("cookie") ?? "",
  );
  const oauthQuery = asked.location.search.slice(1);
  const { redirectUrl, key } = await callerOf(member).oauth.consent({ oauthQuery, mode, scopes });
  const code = new URL(redirectUrl).searchParams.get("code") as string;
  const tokens = await token({
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    code_verifier: asked.verifier,
    resource: `${origin}/mcp`,
  });
  return { clientId, key, tokens: tokens.body };
}

describe("OAuth for MCP clients", () => {
  it("the whole flow as a client sees it: challenge, metadata, registration, PKCE, sign-in, consent, token, tools", async () => {
    // 1. An unauthenticated request: 401 with the resource metadata's URL in the challenge.
    const refused = await postMcp(null);
    expect(refused.status).toBe(401);
    const challenge = challengeOf(refused.headers.get("www-authenticate"));
    expect(challenge).toMatchObject({ realm: "mcp", error: "invalid_token" });
    expect(challenge.resource_metadata).toBe(`${origin}/.well-known/oauth-protected-resource/mcp`);

    // 2. The protected resource's metadata names this origin as its authorization server.
    const prm = (await (await fetch(challenge.resource_metadata as string)).json()) as Record<string, unknown>;
    expect(prm.resource).toBe(`${origin}/mcp`);
    expect(prm.authorization_servers).toEqual([origin]);
    expect(prm.scopes_supported).toContain("accounts:read");

    // 3. The authorization server's metadata at the origin's root (RFC 8414).
    const as = (await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(as.issuer).toBe(origin);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    expect(as.registration_endpoint).toBe(`${origin}/api/auth/oauth2/register`);
    expect(as.authorization_endpoint).toBe(`${origin}/api/auth/oauth2/authorize`);
    expect(as.token_endpoint).toBe(`${origin}/api/auth/oauth2/token`);

    // 4. Dynamic registration, no authentication.
    const registered = await register("Claude");
    expect(registered.status).toBe(201);
    const clientId = registered.body.client_id as string;
    expect(clientId).toBeTruthy();

    // 5. Authorization with PKCE, signed out: to the sign-in page, carrying the signed request.
    const signedOut = await authorize(clientId, "accounts:read tasks:read tasks:write offline_access");
    expect(signedOut.status).toBe(302);
    expect(signedOut.location.pathname).toBe("/signin");
    expect(signedOut.location.searchParams.get("sig")).toBeTruthy();

    // 6. Signed in (the owner's browser): to the consent page in the settings.
    const owner = team.members.owner;
    const asked = await authorize(
      clientId,
      "accounts:read tasks:read tasks:write offline_access",
      owner.request.headers.get("cookie") ?? "",
    );
    expect(asked.location.pathname).toBe("/settings/connect");
    const oauthQuery = asked.location.search.slice(1);
    const shown = await callerOf(owner).oauth.request({ oauthQuery });
    expect(shown).toMatchObject({
      clientId,
      clientName: "Claude",
      redirectHost: "claude.ai",
      scopes: ["accounts:read", "tasks:read", "tasks:write"],
      offline: true,
    });

    // 7. The member consents for their organisation with fewer scopes than asked for.
    const { redirectUrl, key } = await callerOf(owner).oauth.consent({
      oauthQuery,
      mode: "live",
      scopes: ["accounts:read", "tasks:read"],
    });
    const back = new URL(redirectUrl);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get("state")).toBe(asked.state);
    expect(key).toMatchObject({ oauthClientId: clientId, scopes: ["accounts:read", "tasks:read"], isTest: false });

    // 8. The code for tokens, with the PKCE verifier; a wrong verifier is refused.
    const code = back.searchParams.get("code") as string;
    const wrong = await token({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: randomBytes(32).toString("base64url"),
      resource: `${origin}/mcp`,
    });
    expect([400, 401]).toContain(wrong.status);
    expect(wrong.body.access_token).toBeUndefined();
    const asked2 = await authorize(
      clientId,
      "accounts:read tasks:read offline_access",
      owner.request.headers.get("cookie") ?? "",
    );
    const second = await callerOf(owner).oauth.consent({
      oauthQuery: asked2.location.search.slice(1),
      mode: "live",
      scopes: ["accounts:read", "tasks:read"],
    });
    const tokens = await token({
      grant_type: "authorization_code",
      code: new URL(second.redirectUrl).searchParams.get("code") as string,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: asked2.verifier,
      resource: `${origin}/mcp`,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.token_type).toMatch(/bearer/i);
    expect(tokens.body.refresh_token).toBeTruthy();
    // A second consent replaced the first connection: one connection per member, client and organisation.
    const connections = await callerOf(owner).oauth.connections();
    expect(connections.filter((item) => item.clientId === clientId).map((item) => item.keyId)).toEqual([second.key.id]);

    // 9. The MCP endpoint with the access token: only the consented scopes' tools, a call in the request log as the
    // connection's key.
    const mcp = new Client({ name: "claude-test", version: "1.0.0" });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(server.mcpUrl), {
        authProvider: { token: async () => tokens.body.access_token },
      }),
    );
    const names = (await mcp.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toContain("list_records");
    expect(names).not.toContain("create_task");
    expect(names).not.toContain("log_touchpoint");
    const result = (await mcp.callTool({ name: "whoami", arguments: {} })) as CallToolResult;
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result.structuredContent)).toContain(team.orgId);
    await mcp.close();
    await auditWritten();
    const rows = await prisma().auditLog.findMany({ where: { orgId: team.orgId, method: "MCP" } });
    expect(rows.map((row) => [row.path, row.apiKeyId])).toContainEqual(["whoami", second.key.id]);

    // 10. The refresh token gives a new access token that works too.
    const refreshed = await token({
      grant_type: "refresh_token",
      refresh_token: tokens.body.refresh_token as string,
      client_id: clientId,
      resource: `${origin}/mcp`,
    });
    expect(refreshed.status).toBe(200);
    expect((await postMcp(refreshed.body.access_token as string)).status).toBe(200);
  });

  it("the SDK's own OAuth client connects: it discovers, registers and authorizes; the member consents in the browser", async () => {
    const saved: { info?: unknown; tokens?: unknown; verifier: string; authorizationUrl?: URL; discovery?: unknown } = {
      verifier: "",
    };
    const provider: OAuthClientProvider = {
      get redirectUrl() {
        return REDIRECT_URI;
      },
      get clientMetadata() {
        return {
          client_name: "SDK agent",
          redirect_uris: [REDIRECT_URI],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "none",
        };
      },
      clientInformation: () => saved.info as never,
      saveClientInformation: (info) => {
        saved.info = info;
      },
      tokens: () => saved.tokens as never,
      saveTokens: (tokens) => {
        saved.tokens = tokens;
      },
      redirectToAuthorization: (url) => {
        saved.authorizationUrl = url;
      },
      saveCodeVerifier: (verifier) => {
        saved.verifier = verifier;
      },
      codeVerifier: () => saved.verifier,
      saveDiscoveryState: (state) => {
        saved.discovery = state;
      },
      discoveryState: () => saved.discovery as never,
    };
    const first = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: provider });
    await expect(new Client({ name: "sdk-agent", version: "1.0.0" }).connect(first)).rejects.toThrow(UnauthorizedError);
    const authorizationUrl = saved.authorizationUrl as URL;
    expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(`${origin}/api/auth/oauth2/authorize`);
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("resource")).toBe(`${origin}/mcp`);
    // The member's browser: the consent page, where they choose two scopes.
    const owner = team.members.owner;
    const opened = await navigate(authorizationUrl, owner.request.headers.get("cookie") ?? "");
    const consentPage = new URL(opened.location ?? "", origin);
    expect(consentPage.pathname).toBe("/settings/connect");
    const { redirectUrl, key } = await callerOf(owner).oauth.consent({
      oauthQuery: consentPage.search.slice(1),
      mode: "live",
      scopes: ["accounts:read", "notes:write"],
    });
    // The client's callback.
    await first.finishAuth(new URL(redirectUrl).searchParams);
    const mcp = new Client({ name: "sdk-agent", version: "1.0.0" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: provider }));
    const names = (await mcp.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain("add_note");
    expect(names).not.toContain("create_record");
    const whoami = (await mcp.callTool({ name: "whoami", arguments: {} })) as CallToolResult;
    expect(JSON.stringify(whoami.structuredContent)).toContain(key.id);
    await mcp.close();
  });

  it("a client named by the URL of its metadata document (CIMD) connects without registering", async () => {
    const as = (await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(as.client_id_metadata_document_supported).toBe(true);
    const owner = team.members.owner;
    const asked = await authorize(
      CIMD_CLIENT_ID,
      "accounts:read offline_access",
      owner.request.headers.get("cookie") ?? "",
    );
    expect(asked.location.pathname).toBe("/settings/connect");
    const oauthQuery = asked.location.search.slice(1);
    expect(await callerOf(owner).oauth.request({ oauthQuery })).toMatchObject({
      clientId: CIMD_CLIENT_ID,
      clientName: "Agent by URL",
      redirectHost: "claude.ai",
    });
    const { redirectUrl } = await callerOf(owner).oauth.consent({
      oauthQuery,
      mode: "live",
      scopes: ["accounts:read"],
    });
    const tokens = await token({
      grant_type: "authorization_code",
      code: new URL(redirectUrl).searchParams.get("code") as string,
      redirect_uri: REDIRECT_URI,
      client_id: CIMD_CLIENT_ID,
      code_verifier: asked.verifier,
      resource: `${origin}/mcp`,
    });
    expect(tokens.status).toBe(200);
    expect((await postMcp(tokens.body.access_token as string)).status).toBe(200);
    // A URL whose document cannot be fetched is no client.
    const unknown = await authorize(
      "https://agent.example.com/other.json",
      "accounts:read",
      owner.request.headers.get("cookie") ?? "",
    );
    expect(unknown.location.pathname).not.toBe("/settings/connect");
  });

  it("a registration answers registration_client_uri, read and deleted with its registration_access_token", async () => {
    const { status, body } = await register("Managed agent");
    expect(status).toBe(201);
    const uri = body.registration_client_uri as string;
    expect(uri).toBe(`${origin}/api/auth/oauth2/register/${encodeURIComponent(body.client_id as string)}`);
    const bearer = { Authorization: `Bearer ${body.registration_access_token as string}` };
    const read = await fetch(uri, { headers: bearer });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({
      client_id: body.client_id,
      client_name: "Managed agent",
      redirect_uris: [REDIRECT_URI],
      registration_client_uri: uri,
    });
    expect((await fetch(uri, { headers: { Authorization: "Bearer mrt_wrong" } })).status).toBe(401);
    expect((await fetch(uri)).status).toBe(401);
    expect((await fetch(uri, { method: "DELETE", headers: bearer })).status).toBe(204);
    expect((await fetch(uri, { headers: bearer })).status).toBe(401);
    expect(await prisma().oauthClient.count({ where: { clientId: body.client_id as string } })).toBe(0);
  });

  it("a token whose audience is another resource is 401", async () => {
    const { key, tokens } = await connect(team.members.admin, ["accounts:read"]);
    expect((await postMcp(tokens.access_token as string)).status).toBe(200);
    const api = authFor(origin).api;
    const now = Math.floor(Date.now() / 1000);
    for (const aud of ["https://other.example.com/mcp", `${origin}/api/v1`]) {
      const { token: forged } = (await api.signJWT({
        body: {
          payload: { iss: origin, aud, sub: team.members.admin.userId, [KEY_CLAIM]: key.id, iat: now, exp: now + 600 },
        },
      })) as { token: string };
      const response = await postMcp(forged);
      expect(response.status).toBe(401);
      expect(await response.text()).toContain("another resource");
    }
    // Another issuer, and a token signed by a key that is not this server's, are refused too.
    const { token: otherIssuer } = (await api.signJWT({
      body: { payload: { iss: "https://evil.example.com", aud: `${origin}/mcp`, [KEY_CLAIM]: key.id, exp: now + 600 } },
    })) as { token: string };
    expect((await postMcp(otherIssuer)).status).toBe(401);
    const [header, payload] = (tokens.access_token as string).split(".");
    expect((await postMcp(`${header}.${payload}.${randomBytes(64).toString("base64url")}`)).status).toBe(401);
  });

  it("a revoked OAuth client is refused within a second, and its refresh token no longer works", async () => {
    const owner = team.members.owner;
    const { clientId, key, tokens } = await connect(owner, ["accounts:read"]);
    expect((await postMcp(tokens.access_token as string)).status).toBe(200);
    const listed = (await callerOf(owner).oauth.connections()).find((item) => item.keyId === key.id);
    expect(listed).toMatchObject({
      clientName: "Claude (test)",
      redirectHosts: ["claude.ai"],
      scopes: ["accounts:read"],
    });
    expect(listed?.lastUsedAt).toBeInstanceOf(Date);
    await callerOf(owner).oauth.revoke({ keyId: key.id });
    const revokedAt = Date.now();
    let status = 200;
    while (status !== 401 && Date.now() - revokedAt < 1000) {
      status = (await postMcp(tokens.access_token as string)).status;
    }
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(1000);
    const refreshed = await token({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token as string,
      client_id: clientId,
      resource: `${origin}/mcp`,
    });
    expect(refreshed.status).toBe(400);
    expect((await callerOf(owner).oauth.connections()).some((item) => item.keyId === key.id)).toBe(false);
  });

  it("removing the member who connected a client revokes the connection, whatever is chosen for their keys", async () => {
    const admin = await addMember(team.orgId, "admin", "leaving");
    const { key, tokens } = await connect(admin, ["accounts:read"]);
    expect((await postMcp(tokens.access_token as string)).status).toBe(200);
    const memberId = await memberIdOf(team.orgId, admin.userId);
    // The removal's confirmation lists the keys the member made for the organisation, not their connections.
    expect(await activeKeysCreatedBy(team.orgId, admin.userId)).toEqual([]);
    await callerOf(team.members.owner).team.removeMember({ memberId, revokeKeys: false });
    const removedAt = Date.now();
    let status = 200;
    while (status !== 401 && Date.now() - removedAt < 1000)
      status = (await postMcp(tokens.access_token as string)).status;
    expect(status).toBe(401);
    const row = await prisma().apiKey.findUniqueOrThrow({ where: { id: key.id }, select: { revokedAt: true } });
    expect(row.revokedAt).toBeInstanceOf(Date);
    expect(await prisma().oauthConsent.count({ where: { referenceId: key.id } })).toBe(0);
  });

  it("a member cannot consent scopes beyond their role, nor a mode their role cannot create", async () => {
    const developer = team.members.developer;
    const { body: client } = await register();
    const asked = await authorize(
      client.client_id as string,
      "accounts:read admin:read",
      developer.request.headers.get("cookie") ?? "",
    );
    const oauthQuery = asked.location.search.slice(1);
    await expect(
      callerOf(developer).oauth.consent({ oauthQuery, mode: "test", scopes: ["accounts:read", "admin:read"] }),
    ).rejects.toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("admin:read") });
    await expect(
      callerOf(developer).oauth.consent({ oauthQuery, mode: "live", scopes: ["accounts:read"] }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    const viewer = team.members.viewer;
    const forViewer = await authorize(
      client.client_id as string,
      "accounts:read",
      viewer.request.headers.get("cookie") ?? "",
    );
    await expect(
      callerOf(viewer).oauth.consent({
        oauthQuery: forViewer.location.search.slice(1),
        mode: "test",
        scopes: ["accounts:read"],
      }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    // Nor scopes the client did not ask for.
    await expect(
      callerOf(developer).oauth.consent({ oauthQuery, mode: "test", scopes: ["deals:read"] }),
    ).rejects.toMatchObject({ code: "UNPROCESSABLE_CONTENT" });
    // Within the role: a test connection.
    const { key } = await callerOf(developer).oauth.consent({ oauthQuery, mode: "test", scopes: ["accounts:read"] });
    expect(key).toMatchObject({ isTest: true, scopes: ["accounts:read"] });
  });

  it("consent needs a sign-in within 15 minutes, as creating a key does", async () => {
    const admin = team.members.admin;
    const { body: client } = await register();
    const asked = await authorize(
      client.client_id as string,
      "accounts:read",
      admin.request.headers.get("cookie") ?? "",
    );
    await ageSession(admin, 20);
    await expect(
      callerOf(admin).oauth.consent({
        oauthQuery: asked.location.search.slice(1),
        mode: "live",
        scopes: ["accounts:read"],
      }),
    ).rejects.toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(/confirm|sign in/i) });
  });
});
