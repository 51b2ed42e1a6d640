// Provisioning (SCIM 2.0, docs/api-contract.md §11.5) as a directory such as Microsoft Entra sees it, against the real
// PostgreSQL and Redis: the organisation's token from the settings (owners and admins, shown once, rotated, revoked),
// Users and Groups through the SCIM door, groups mapped to roles by the organisation's ordered map, deprovisioning
// (Entra's `active: "False"`, or DELETE) through the one service a removal runs, reactivation, and the directory
// events the page lists.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { createApiKey } from "../../../server/platform/api-keys/service";
import { createSettingsCaller } from "../../../server/settings/router";
import { startApi, type TestServer } from "../../helpers/api";
import { addMember, orgWithRoles, refusal, type TestMember } from "../../helpers/members";

let server: TestServer;
let origin: string;
let scimBase: string;

beforeAll(async () => {
  server = await startApi();
  origin = new URL(server.url).origin;
  scimBase = `${origin}/api/auth/scim/v2`;
});
afterAll(() => server.close());

/** The settings caller of a member, on the test server's origin. */
function callerOf(member: TestMember) {
  return createSettingsCaller({ request: { ...member.request, origin } });
}

const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";

async function scim(token: string | null, method: string, path: string, body?: unknown) {
  const response = await fetch(`${scimBase}${path}`, {
    method,
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { "Content-Type": "application/scim+json" }),
      "User-Agent": "Azure AD SCIM Provisioning",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: SCIM bodies are inspected field by field with expect().
  const json: any = text ? JSON.parse(text) : undefined;
  return { status: response.status, headers: response.headers, body: json };
}

/** A SCIM User as Entra creates one. */
function entraUser(email: string, externalId = randomBytes(8).toString("hex")) {
  return {
    schemas: [USER_SCHEMA],
    externalId,
    userName: email,
    active: true,
    displayName: email.split("@")[0],
    name: { givenName: "Pat", familyName: "Doe" },
    emails: [{ primary: true, type: "work", value: email }],
  };
}

/** Entra's deactivation: `Replace` of `active` with the string `"False"`. */
const entraActive = (value: "True" | "False") => ({
  schemas: [PATCH_OP],
  Operations: [{ op: "Replace", path: "active", value }],
});

async function apiStatus(key: string): Promise<number> {
  const response = await fetch(`${server.url}/accounts?limit=1`, { headers: { Authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return response.status;
}

async function eventsOf(orgId: string) {
  return prisma().directoryEvent.findMany({ where: { orgId }, orderBy: { id: "asc" } });
}

/** An organisation with a member of each role and a SCIM token the admin made. */
async function provisionedOrg() {
  const team = await orgWithRoles();
  const created = await callerOf(team.members.admin).directory.createToken();
  return { ...team, token: created.token };
}

describe("the SCIM token (settings)", () => {
  it("only owners and admins create, rotate or revoke it: other roles get 403 and an action.refused entry", async () => {
    const team = await orgWithRoles();
    for (const role of ["developer", "viewer"] as const) {
      const caller = callerOf(team.members[role]);
      expect((await refusal(caller.directory.createToken())).code).toBe("FORBIDDEN");
      expect((await refusal(caller.directory.rotateToken())).code).toBe("FORBIDDEN");
      expect((await refusal(caller.directory.revokeToken({ id: "ba_scim_credential_someone" }))).code).toBe(
        "FORBIDDEN",
      );
      expect((await refusal(caller.directory.overview())).code).toBe("FORBIDDEN");
    }
    const refused = await prisma().settingsAuditEntry.count({ where: { orgId: team.orgId, action: "action.refused" } });
    expect(refused).toBe(8);
    expect(await prisma().scimManagedConnection.count({ where: { provisioningDomainId: team.orgId } })).toBe(0);
  });

  it("is shown once, a second one is 409, rotation replaces it, revocation ends it; the connection stays", async () => {
    const team = await orgWithRoles();
    const owner = callerOf(team.members.owner);
    const created = await owner.directory.createToken();
    expect(created.baseUrl).toBe(scimBase);
    expect(created.token).toMatch(/^ba_scim_credential_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(created.view).toMatchObject({ status: "active", createdBy: team.members.owner.email });
    const overview = await owner.directory.overview();
    expect(overview.tokens).toHaveLength(1);
    expect(JSON.stringify(overview)).not.toContain(created.token);
    expect((await scim(created.token, "GET", "/Users")).status).toBe(200);
    // The page's "last request": the token's first use is written at once.
    expect((await owner.directory.overview()).lastRequestAt).toBeInstanceOf(Date);

    const again = await refusal(owner.directory.createToken());
    expect(again.code).toBe("CONFLICT");

    const rotated = await callerOf(team.members.admin).directory.rotateToken();
    expect(rotated.previous?.id).toBe(created.view.id);
    expect((await scim(created.token, "GET", "/Users")).status).toBe(401);
    expect((await scim(rotated.token, "GET", "/Users")).status).toBe(200);
    expect((await owner.directory.overview()).tokens.map((token) => token.status)).toEqual(["active", "revoked"]);

    await owner.directory.revokeToken({ id: rotated.view.id });
    expect((await scim(rotated.token, "GET", "/Users")).status).toBe(401);
    expect((await refusal(owner.directory.revokeToken({ id: rotated.view.id }))).code).toBe("NOT_FOUND");
    expect((await refusal(owner.directory.rotateToken())).code).toBe("NOT_FOUND");

    // A new token after revocation keeps the same connection, so what the directory provisioned stays linked.
    const next = await owner.directory.createToken();
    expect((await scim(next.token, "GET", "/Users")).status).toBe(200);
    expect(await prisma().scimManagedConnection.count({ where: { provisioningDomainId: team.orgId } })).toBe(1);

    const audit = await prisma().settingsAuditEntry.findMany({
      where: { orgId: team.orgId, action: { startsWith: "scim.token" } },
      orderBy: { id: "asc" },
      select: { action: true, actorEmail: true },
    });
    expect(audit.map((entry) => entry.action)).toEqual([
      "scim.tokenCreated",
      "scim.tokenRevoked",
      "scim.tokenRotated",
      "scim.tokenRevoked",
      "scim.tokenCreated",
    ]);
    expect(new Set(audit.map((entry) => entry.actorEmail))).toEqual(
      new Set([team.members.owner.email, team.members.admin.email]),
    );
    const events = (await eventsOf(team.orgId)).map((event) => event.action);
    expect(events).toEqual(["token.created", "token.revoked", "token.rotated", "token.revoked", "token.created"]);
  });
});

describe("the SCIM door", () => {
  it("answers 401 with a SCIM error for no token, a wrong one, or another's digest", async () => {
    const { token } = await provisionedOrg();
    const [credentialId] = token.split(".");
    for (const bad of [null, "not-a-token", `${credentialId}.${randomBytes(36).toString("base64url")}`]) {
      const response = await scim(bad, "GET", "/Users");
      expect(response.status).toBe(401);
      expect(response.headers.get("content-type")).toContain("application/scim+json");
      expect(response.headers.get("www-authenticate")).toBe('Bearer realm="SCIM"');
      expect(response.body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
      expect(response.body.status).toBe("401");
    }
  });

  it("refuses a body over 1 MiB with 413 before reading it", async () => {
    const { token, orgId } = await provisionedOrg();
    const user = entraUser(`big-${randomBytes(4).toString("hex")}@example.com`);
    const huge = await scim(token, "POST", "/Users", { ...user, title: "x".repeat(1024 * 1024) });
    expect(huge.status).toBe(413);
    expect(huge.body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
    expect(await prisma().scimUser.count({ where: { provisioningDomainId: orgId } })).toBe(0);
  });

  it("GET /Users?count=500 answers at most 100 resources", async () => {
    const { token, orgId } = await provisionedOrg();
    const domain = `bulk-${randomBytes(4).toString("hex")}.example.com`;
    for (let index = 0; index < 101; index++) {
      const created = await scim(token, "POST", "/Users", entraUser(`person${index}@${domain}`));
      expect(created.status).toBe(201);
    }
    const page = await scim(token, "GET", "/Users?count=500");
    expect(page.status).toBe(200);
    expect(page.body.totalResults).toBe(101);
    expect(page.body.Resources.length).toBe(100);
    expect(page.body.itemsPerPage).toBe(100);
    const rest = await scim(token, "GET", "/Users?count=500&startIndex=101");
    expect(rest.body.Resources.length).toBe(1);
    // Each provisioned person joined with the default role (no policy: viewer).
    expect(
      await prisma().member.count({ where: { orgId, role: "viewer", user: { email: { endsWith: domain } } } }),
    ).toBe(101);
  });

  it("refuses to link an account that is not tied to the organisation (409) and records the refusal", async () => {
    const { token, orgId } = await provisionedOrg();
    const elsewhere = await orgWithRoles();
    const outsider = elsewhere.members.developer.email;
    const response = await scim(token, "POST", "/Users", entraUser(outsider));
    expect(response.status).toBe(409);
    expect(response.body.detail).toContain("not tied to this organisation");
    expect(await prisma().member.count({ where: { orgId, user: { email: outsider } } })).toBe(0);
    const failed = (await eventsOf(orgId)).find((event) => event.action === "request.failed");
    expect(failed).toMatchObject({ outcome: "error", target: "/api/auth/scim/v2/Users" });
    expect(failed?.details).toMatchObject({ method: "POST", status: 409 });
  });
  it("renames a person it created, but never changes the email of someone another organisation has (409)", async () => {
    const { token, orgId } = await provisionedOrg();
    const email = `renamed-${randomBytes(4).toString("hex")}@example.com`;
    const user = await scim(token, "POST", "/Users", entraUser(email, "ext-rename"));
    expect(user.status).toBe(201);
    const userId = (await prisma().user.findUniqueOrThrow({ where: { email } })).id;
    const newEmail = `new-${email}`;
    const renamed = await scim(token, "PUT", `/Users/${user.body.id}`, entraUser(newEmail, "ext-rename"));
    expect(renamed.status).toBe(200);
    expect((await prisma().user.findUniqueOrThrow({ where: { id: userId } })).email).toBe(newEmail);

    // The same person joins another organisation: this directory may no longer move their email elsewhere.
    const other = await orgWithRoles();
    await prisma().member.create({
      data: { id: `m-${randomBytes(6).toString("hex")}`, orgId: other.orgId, userId, role: "viewer" },
    });
    const takeover = `attacker-${randomBytes(4).toString("hex")}@example.net`;
    const refused = await scim(token, "PUT", `/Users/${user.body.id}`, entraUser(takeover, "ext-rename"));
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain("another organisation");
    expect((await prisma().user.findUniqueOrThrow({ where: { id: userId } })).email).toBe(newEmail);
    expect((await scim(token, "GET", `/Users/${user.body.id}`)).body.userName).toBe(newEmail);
    expect(await prisma().member.count({ where: { orgId, userId } })).toBe(1);
  });
});

describe("deprovisioning and reactivation", () => {
  it('active "False" (as Entra sends it) ends the membership, the sessions and the keys they created, not service keys', async () => {
    const team = await provisionedOrg();
    const person = await addMember(team.orgId, "developer", "leaver");
    const ownKey = await createApiKey(
      team.orgId,
      { name: "laptop", scopes: ["accounts:read"], isTest: false },
      { createdById: person.userId },
    );
    const serviceKey = await createApiKey(
      team.orgId,
      { name: "PSA sync", scopes: ["accounts:read"], isTest: false },
      { createdById: person.userId },
    );
    await prisma().apiKey.update({ where: { id: serviceKey.key.id }, data: { serviceKey: true } });
    expect(await apiStatus(ownKey.raw)).toBe(200);
    expect(await prisma().session.count({ where: { userId: person.userId } })).toBeGreaterThan(0);

    const created = await scim(team.token, "POST", "/Users", entraUser(person.email.toUpperCase()));
    expect(created.status).toBe(201);
    // Linked to the existing member, whose profile the directory does not rewrite.
    expect(await prisma().scimUser.findFirst({ where: { id: created.body.id }, select: { userId: true } })).toEqual({
      userId: person.userId,
    });
    expect((await prisma().user.findUniqueOrThrow({ where: { id: person.userId } })).email).toBe(person.email);

    const deactivated = await scim(team.token, "PATCH", `/Users/${created.body.id}`, entraActive("False"));
    expect(deactivated.status).toBe(200);
    expect(deactivated.body.active).toBe(false);

    expect(await prisma().member.count({ where: { orgId: team.orgId, userId: person.userId } })).toBe(0);
    expect(await prisma().session.count({ where: { userId: person.userId } })).toBe(0);
    expect(await apiStatus(ownKey.raw)).toBe(401);
    expect(await apiStatus(serviceKey.raw)).toBe(200);
    const removal = await prisma().memberRemoval.findUniqueOrThrow({
      where: { orgId_email: { orgId: team.orgId, email: person.email } },
    });
    expect(removal).toMatchObject({ source: "directory", role: "developer", userId: person.userId });
    // The person's settings session is refused from their next request.
    expect((await refusal(person.caller.me())).code).toBe("UNAUTHORIZED");

    const audit = await prisma().settingsAuditEntry.findMany({
      where: { orgId: team.orgId, actorEmail: "Directory (SCIM)" },
      orderBy: { id: "asc" },
      select: { action: true, target: true, details: true, userAgent: true },
    });
    expect(audit.find((entry) => entry.action === "member.removed")).toMatchObject({
      target: person.email,
      userAgent: "Azure AD SCIM Provisioning",
    });
    expect(audit.filter((entry) => entry.action === "apiKey.revoked")).toHaveLength(1);
    // The member.removed event of the events feed and webhooks, as a removal by hand sends it.
    const removedEvent = await prisma().event.findFirst({ where: { orgId: team.orgId, name: "member.removed" } });
    expect(removedEvent?.data).toMatchObject({ email: person.email, role: "developer", source: "directory" });
    const deprovisioned = (await eventsOf(team.orgId)).find((event) => event.action === "member.deprovisioned");
    expect(deprovisioned).toMatchObject({ target: person.email, outcome: "ok" });
    expect(deprovisioned?.details).toMatchObject({ role: "developer", revokedKeys: 1 });

    // The page names the keys that stay.
    const overview = await callerOf(team.members.owner).directory.overview();
    expect(overview.serviceKeys.map((key) => key.name)).toEqual(["PSA sync"]);
  });

  it("reactivation restores the membership with the mapped role, not the keys or the sessions", async () => {
    const team = await provisionedOrg();
    await prisma().ssoPolicy.create({
      data: {
        orgId: team.orgId,
        defaultRole: "viewer",
        groupRoles: [
          { group: "crm-admins", role: "admin" },
          { group: "crm-devs", role: "developer" },
        ],
      },
    });
    const person = await addMember(team.orgId, "viewer", "returner");
    const key = await createApiKey(
      team.orgId,
      { name: "script", scopes: ["accounts:read"], isTest: true },
      { createdById: person.userId },
    );
    const user = await scim(team.token, "POST", "/Users", entraUser(person.email));
    expect(user.status).toBe(201);
    const devs = await scim(team.token, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: "crm-devs",
      members: [{ value: user.body.id }],
    });
    expect(devs.status).toBe(201);
    const role = () =>
      prisma().member.findUnique({
        where: { orgId_userId: { orgId: team.orgId, userId: person.userId } },
        select: { role: true },
      });
    expect(await role()).toEqual({ role: "developer" });

    expect((await scim(team.token, "PATCH", `/Users/${user.body.id}`, entraActive("False"))).status).toBe(200);
    expect(await role()).toBeNull();
    expect(await apiStatus(key.raw)).toBe(401);

    const reactivated = await scim(team.token, "PATCH", `/Users/${user.body.id}`, entraActive("True"));
    expect(reactivated.status).toBe(200);
    expect(reactivated.body.active).toBe(true);
    expect(await role()).toEqual({ role: "developer" });
    expect(await prisma().memberRemoval.count({ where: { orgId: team.orgId, email: person.email } })).toBe(0);
    expect(await apiStatus(key.raw)).toBe(401);
    expect(await prisma().session.count({ where: { userId: person.userId } })).toBe(0);
    expect((await eventsOf(team.orgId)).map((event) => event.action)).toEqual([
      "token.created",
      "member.role_changed",
      "member.deprovisioned",
      "member.reactivated",
    ]);
  });

  it("groups give the first matching rule's role; DELETE deprovisions as active false does", async () => {
    const team = await provisionedOrg();
    await prisma().ssoPolicy.create({
      data: {
        orgId: team.orgId,
        defaultRole: "viewer",
        groupRoles: [
          // Entra sends a group's object id as its externalId; a rule may name either.
          { group: "11111111-2222-3333-4444-555555555555", role: "admin" },
          { group: "crm-devs", role: "developer" },
        ],
      },
    });
    const email = `new-${randomBytes(4).toString("hex")}@example.com`;
    const user = await scim(team.token, "POST", "/Users", entraUser(email));
    expect(user.status).toBe(201);
    const userId = (await prisma().user.findUniqueOrThrow({ where: { email } })).id;
    const role = async () =>
      (await prisma().member.findUnique({ where: { orgId_userId: { orgId: team.orgId, userId } } }))?.role ?? null;
    expect(await role()).toBe("viewer");

    // As Entra does: the group is created empty (with its classic schema marker), then members are added by PATCH.
    const devs = await scim(team.token, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA, "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group"],
      displayName: "crm-devs",
    });
    expect(devs.status).toBe(201);
    const joined = await scim(team.token, "PATCH", `/Groups/${devs.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "Add", path: "members", value: [{ value: user.body.id }] }],
    });
    expect(joined.status).toBe(200);
    expect(await role()).toBe("developer");
    const admins = await scim(team.token, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: "CRM Admins",
      externalId: "11111111-2222-3333-4444-555555555555",
      members: [{ value: user.body.id }],
    });
    expect(admins.status).toBe(201);
    expect(await role()).toBe("admin");
    const left = await scim(team.token, "PATCH", `/Groups/${admins.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "Remove", path: `members[value eq "${user.body.id}"]` }],
    });
    expect(left.status).toBe(200);
    expect(await role()).toBe("developer");

    const deleted = await scim(team.token, "DELETE", `/Users/${user.body.id}`);
    expect(deleted.status).toBe(204);
    expect(await role()).toBeNull();
    expect(
      await prisma().memberRemoval.findUnique({ where: { orgId_email: { orgId: team.orgId, email } } }),
    ).toMatchObject({ source: "directory", role: "developer" });
    expect((await scim(team.token, "GET", `/Users/${user.body.id}`)).status).toBe(404);
  });

  it("never deprovisions the last owner (409, nothing changes) and records why", async () => {
    const team = await provisionedOrg();
    const owner = team.members.owner;
    const user = await scim(team.token, "POST", "/Users", entraUser(owner.email));
    expect(user.status).toBe(201);
    const response = await scim(team.token, "PATCH", `/Users/${user.body.id}`, entraActive("False"));
    expect(response.status).toBe(409);
    expect(response.body.detail).toContain("last owner");
    expect(
      await prisma().member.findUnique({ where: { orgId_userId: { orgId: team.orgId, userId: owner.userId } } }),
    ).toMatchObject({ role: "owner" });
    expect((await scim(team.token, "GET", `/Users/${user.body.id}`)).body.active).toBe(true);
    const events = await eventsOf(team.orgId);
    expect(events.find((event) => event.action === "member.deprovisioned")).toMatchObject({
      outcome: "error",
      target: owner.email,
    });
    expect(events.find((event) => event.action === "request.failed")?.details).toMatchObject({ status: 409 });
  });

  it("a member removed by hand is not added back by the directory; the events list says so", async () => {
    const team = await provisionedOrg();
    const person = await addMember(team.orgId, "developer", "removed");
    const memberId = (await prisma().member.findFirstOrThrow({ where: { orgId: team.orgId, userId: person.userId } }))
      .id;
    await callerOf(team.members.admin).team.removeMember({ memberId, revokeKeys: false });
    expect(
      await prisma().memberRemoval.findUnique({ where: { orgId_email: { orgId: team.orgId, email: person.email } } }),
    ).toMatchObject({ source: "manual" });
    const user = await scim(team.token, "POST", "/Users", entraUser(person.email));
    expect(user.status).toBe(201);
    expect(await prisma().member.count({ where: { orgId: team.orgId, userId: person.userId } })).toBe(0);
    const events = await callerOf(team.members.admin).directory.events();
    expect(events[0]).toMatchObject({ action: "member.kept", outcome: "error", target: person.email });
  });
});
