// Provisioning and single sign-on together (docs/api-contract.md §11.4, §11.5), against the real PostgreSQL, Redis and
// an OIDC provider (oauth2-mock-server): a person the directory deactivates is refused at their next SSO sign-in with
// MEMBER_DEPROVISIONED, and signs in again once the directory reactivates them, with the role their SCIM groups give.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { createSettingsCaller } from "../../../server/settings/router";
import { startApi, type TestServer } from "../../helpers/api";
import { connectOidcOrg, type OidcProvider, ssoSignIn, startOidcProvider } from "../../helpers/identity-providers";

let idp: OidcProvider;
let server: TestServer;
let scimBase: string;

beforeAll(async () => {
  idp = await startOidcProvider();
  server = await startApi();
  scimBase = `${new URL(server.url).origin}/api/auth/scim/v2`;
});
afterAll(async () => {
  await server.close();
  await idp.close();
});

async function scim(token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${scimBase}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/scim+json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: SCIM bodies are inspected field by field with expect().
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as any };
}

const active = (value: "True" | "False") => ({
  schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
  Operations: [{ op: "Replace", path: "active", value }],
});

describe("deprovisioning and single sign-on", () => {
  it("a person the directory deactivated is refused MEMBER_DEPROVISIONED, and signs in again once reactivated", async () => {
    const org = await connectOidcOrg(idp, { groupRoles: [{ group: "crm-engineers", role: "developer" }] });
    const email = `dee@${org.domain}`;
    idp.signInAs({ sub: "dee-1", email, name: "Dee", groups: [] });
    expect((await ssoSignIn(org.providerId)).url.pathname).toBe("/settings");
    const userId = (await prisma().user.findUniqueOrThrow({ where: { email } })).id;
    const role = async () =>
      (await prisma().member.findUnique({ where: { orgId_userId: { orgId: org.orgId, userId } } }))?.role ?? null;
    expect(await role()).toBe("viewer");

    const admin = createSettingsCaller({ request: org.members.admin.request });
    const { token } = await admin.directory.createToken();
    const user = await scim(token, "POST", "/Users", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: email,
      externalId: "entra-object-dee",
      active: true,
      emails: [{ primary: true, type: "work", value: email }],
    });
    expect(user.status).toBe(201);
    const group = await scim(token, "POST", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "crm-engineers",
      members: [{ value: user.body.id }],
    });
    expect(group.status).toBe(201);
    expect(await role()).toBe("developer");

    expect((await scim(token, "PATCH", `/Users/${user.body.id}`, active("False"))).status).toBe(200);
    expect(await role()).toBeNull();
    expect(await prisma().session.count({ where: { userId } })).toBe(0);
    const refused = await ssoSignIn(org.providerId);
    expect(refused.url.pathname).toBe("/signin");
    expect(refused.url.searchParams.get("error")).toBe("MEMBER_DEPROVISIONED");
    expect(await role()).toBeNull();

    expect((await scim(token, "PATCH", `/Users/${user.body.id}`, active("True"))).status).toBe(200);
    expect(await role()).toBe("developer");
    expect(await prisma().session.count({ where: { userId } })).toBe(0);
    idp.signInAs({ sub: "dee-1", email, name: "Dee", groups: ["crm-engineers"] });
    expect((await ssoSignIn(org.providerId)).url.pathname).toBe("/settings");
    expect(await role()).toBe("developer");

    const events = await prisma().directoryEvent.findMany({ where: { orgId: org.orgId }, orderBy: { id: "asc" } });
    expect(events.map((event) => event.action)).toEqual([
      "member.joined",
      "token.created",
      "member.role_changed",
      "member.deprovisioned",
      "signin.refused",
      "member.reactivated",
    ]);
  });
});
