// Identity providers for the single sign-on tests, offline: an OIDC provider (oauth2-mock-server, as better-auth's own
// tests use) whose next sign-in carries the claims a test sets, a browser that follows redirects between it and our
// better-auth endpoints with a cookie jar, and a DNS TXT table for domain verification.
import { randomBytes } from "node:crypto";
import { OAuth2Server } from "oauth2-mock-server";
import { resetEnvCache } from "../../server/env";
import { authFor } from "../../server/identity/better-auth";
import { setTxtResolver } from "../../server/identity/sso/domains";
import { providerIdOf } from "../../server/identity/sso/plugin";
import { CLIENT_ADDRESS_HEADER } from "../../server/platform/client-address";
import { cookieHeader, orgWithRoles, randomAddress, TEST_ORIGIN, type TestMember } from "./members";

/** The claims of the next sign-in at the OIDC provider (the ID token's and the userinfo answer's). */
export interface OidcPerson {
  sub: string;
  email: string;
  name?: string;
  groups?: string[];
}

/** A running OIDC provider. */
export interface OidcProvider {
  issuer: string;
  /** Who the provider signs in next (every sign-in until changed). */
  signInAs(person: OidcPerson): void;
  close(): Promise<void>;
}

/**
 * Starts an OIDC provider on a loopback port and lets the service trust it (`SSO_TRUSTED_IDP_ORIGINS`: loopback
 * issuers are refused otherwise). Call before the first sign-in of the test file.
 */
export async function startOidcProvider(): Promise<OidcProvider> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate("RS256");
  await server.start(0, "127.0.0.1");
  const issuer = server.issuer.url as string;
  process.env.SSO_TRUSTED_IDP_ORIGINS = new URL(issuer).origin;
  resetEnvCache();
  let person: OidcPerson = { sub: "nobody", email: "nobody@example.invalid" };
  const claims = () => ({
    sub: person.sub,
    email: person.email,
    email_verified: true,
    name: person.name ?? person.email,
    ...(person.groups ? { groups: person.groups } : {}),
  });
  server.service.on("beforeTokenSigning", (token) => {
    Object.assign(token.payload, claims());
  });
  server.service.on("beforeUserinfo", (response) => {
    response.body = claims();
  });
  return {
    issuer,
    signInAs: (next) => {
      person = next;
    },
    close: () => server.stop(),
  };
}

/** The TXT records the tests' DNS answers with, by name. */
export function fakeDns(records: Record<string, string[]>): void {
  setTxtResolver(async (name) => records[name] ?? []);
}

/** A page a browser ended on after following redirects, with its cookies. */
export interface Landing {
  url: URL;
  status: number;
  cookie: string;
  body: string;
}

/**
 * Follows a browser's redirects from `url` (our better-auth endpoints answered in process, the identity provider over
 * HTTP), keeping our cookies, until a page that is not a redirect or is outside both (our settings pages).
 * @param init the first request (a POST's method and body).
 */
export async function browse(
  url: string,
  cookie = "",
  init: { method?: string; body?: BodyInit; contentType?: string } = {},
): Promise<Landing> {
  let next = new URL(url, TEST_ORIGIN);
  let jar = cookie;
  let request: { method: string; body?: BodyInit; contentType?: string } = { method: init.method ?? "GET", ...init };
  for (let hop = 0; hop < 10; hop += 1) {
    const ours = next.origin === TEST_ORIGIN;
    if (ours && !next.pathname.startsWith("/api/auth/")) {
      return { url: next, status: 200, cookie: jar, body: "" };
    }
    const headers = new Headers();
    if (ours && jar) headers.set("cookie", jar);
    if (request.contentType) headers.set("content-type", request.contentType);
    if (ours) headers.set("origin", TEST_ORIGIN);
    const response = ours
      ? await authFor(TEST_ORIGIN).handler(
          new Request(next, { method: request.method, headers, body: request.body, redirect: "manual" }),
        )
      : await fetch(next, { method: request.method, headers, body: request.body, redirect: "manual" });
    if (ours) jar = cookieHeader(response.headers, jar);
    const location = response.headers.get("location");
    if (response.status < 300 || response.status >= 400 || !location) {
      return { url: next, status: response.status, cookie: jar, body: await response.text() };
    }
    next = new URL(location, next);
    request = { method: "GET" };
  }
  throw new Error(`too many redirects, last ${next}`);
}

/**
 * Starts a sign-in through the organisation's provider as a browser does from the sign-in page (`POST
 * /api/auth/sign-in/sso`, errors sent to `/signin` unless `callbackURL` is another page, then to that page).
 * @returns the identity provider's URL the browser is sent to, and the browser's cookies.
 * @throws Error when better-auth does not start the sign-in.
 */
export async function startSsoSignIn(
  providerId: string,
  cookie = "",
  callbackURL = "/settings",
): Promise<{ url: string; cookie: string }> {
  const headers = new Headers({ "content-type": "application/json", origin: TEST_ORIGIN });
  headers.set(CLIENT_ADDRESS_HEADER, randomAddress());
  if (cookie) headers.set("cookie", cookie);
  const started = await authFor(TEST_ORIGIN).handler(
    new Request(`${TEST_ORIGIN}/api/auth/sign-in/sso`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        providerId,
        callbackURL,
        errorCallbackURL: callbackURL === "/settings" ? "/signin" : callbackURL,
      }),
    }),
  );
  const { url } = (await started.json()) as { url?: string };
  if (!url) throw new Error(`sign-in did not start: ${started.status}`);
  return { url, cookie: cookieHeader(started.headers, cookie) };
}

/**
 * Signs in through the organisation's provider as a browser does from the sign-in page: starts the sign-in
 * ({@link startSsoSignIn}), then follows the identity provider back to us.
 * @returns where the browser landed (`/settings`, or `/signin?error=<code>` when refused) and its cookies.
 */
export async function ssoSignIn(providerId: string, cookie = "", callbackURL = "/settings"): Promise<Landing> {
  const started = await startSsoSignIn(providerId, cookie, callbackURL);
  return browse(started.url, started.cookie);
}

/** The policy {@link connectOidcOrg} saves, field by field overridable. */
export interface TestPolicy {
  mode: "optional" | "required";
  jit: boolean;
  groupRoles: { group: string; role: "admin" | "developer" | "viewer" }[];
}

/**
 * A fresh organisation with a member of each role, its domain `acme-<hex>.example` verified through the fake DNS, an
 * identity provider connected by its owner with `connect`, and a policy saved (default: optional, JIT on, viewer by
 * default, crm-admins → admin).
 */
export async function connectedOrg(connect: (owner: TestMember) => Promise<unknown>, policy: Partial<TestPolicy> = {}) {
  const team = await orgWithRoles();
  const { owner } = team.members;
  const domain = `acme-${randomBytes(4).toString("hex")}.example`;
  const added = await owner.caller.sso.addDomain({ domain });
  fakeDns({ [added.txtName]: [added.txtValue] });
  const verified = await owner.caller.sso.verifyDomain({ domain });
  if (!verified.verified) throw new Error(`domain did not verify: ${verified.lastError}`);
  await connect(owner);
  await owner.caller.sso.savePolicy({
    mode: policy.mode ?? "optional",
    jit: policy.jit ?? true,
    defaultRole: "viewer",
    groupsClaim: "groups",
    groupRoles: policy.groupRoles ?? [{ group: "crm-admins", role: "admin" }],
    graceUntil: null,
  });
  return { ...team, domain, providerId: providerIdOf(team.orgId) };
}

/** {@link connectedOrg} with the OIDC provider `idp`. */
export function connectOidcOrg(idp: OidcProvider, policy: Partial<TestPolicy> = {}) {
  return connectedOrg(
    (owner) =>
      owner.caller.sso.connectOidc({
        issuer: idp.issuer,
        clientId: "crm-test",
        clientSecret: "s3cret",
        extraScopes: [],
      }),
    policy,
  );
}
