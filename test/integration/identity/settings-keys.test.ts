// Keys that cannot outrun the settings (docs/api-contract.md §5.9, §5.10), against the real PostgreSQL and Redis and a
// receiver on 127.0.0.1: every key needs a recent sign-in, no key carries a scope its creator's role could not use,
// keys name their creator and can be revoked with them, and what a key changes through /api/v1 (endpoints, secrets,
// test events, redeliveries) is in the settings audit trail beside what members change in the settings.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../../server/db/client";
import { prisma } from "../../../server/db/transaction";
import { resetEnvCache } from "../../../server/env";
import { StepUpRequiredError } from "../../../server/identity/session";
import { client, startApi, type TestServer } from "../../helpers/api";
import { ageSession, memberIdOf, orgWithRoles, refusal } from "../../helpers/members";
import { type Receiver, startReceiver } from "../../helpers/receiver";

resetEnvCache();

let server: TestServer;
let receiver: Receiver;
beforeAll(async () => {
  server = await startApi();
  receiver = await startReceiver();
});
afterAll(async () => {
  await server.close();
  await receiver.close();
  await closeDb();
});

describe("creating keys", () => {
  it("a developer needs a recent sign-in even for a test key, and cannot give one admin:read", async () => {
    const { orgId, members } = await orgWithRoles();
    const { name } = await prisma().organisation.findUniqueOrThrow({ where: { id: orgId } });
    const developer = members.developer;
    await ageSession(developer, 30);
    const stale = await refusal(
      developer.caller.apiKeys.create({ name: "Sync", mode: "test", scopes: ["webhooks:write"] }),
    );
    expect(stale.cause).toBeInstanceOf(StepUpRequiredError);
    await developer.caller.security.confirm({ password: developer.password });

    const beyond = await refusal(
      developer.caller.apiKeys.create({ name: "Sync", mode: "test", scopes: ["webhooks:write", "admin:read"] }),
    );
    expect(beyond.code).toBe("FORBIDDEN");
    expect(beyond.message).toBe(`Your role (developer) cannot give a key admin:read: ask an owner or admin of ${name}`);
    expect(
      await prisma().settingsAuditEntry.findFirst({
        where: { orgId, actorUserId: developer.userId, action: "action.refused" },
        select: { details: true },
      }),
    ).toMatchObject({ details: { attempted: "apiKeys.create", reason: beyond.message } });
    expect(await prisma().apiKey.count({ where: { orgId } })).toBe(0);

    // What a developer may do in the settings, a key of theirs may do: test data and webhooks.
    const created = await developer.caller.apiKeys.create({
      name: "Sync",
      mode: "test",
      scopes: ["webhooks:write", "accounts:write"],
    });
    expect(created.key.createdBy).toEqual({ id: developer.userId, email: developer.email, name: "developer person" });
    const listed = await members.viewer.caller.apiKeys.list();
    expect(listed.map((key) => key.createdBy?.email)).toEqual([developer.email]);

    // A key an admin made with admin:read is not one a developer may remake by rotating it.
    await members.admin.caller.apiKeys.create({ name: "Reporting", mode: "test", scopes: ["admin:read"] });
    const reporting = (await prisma().apiKey.findFirstOrThrow({ where: { orgId, name: "Reporting" } })).id;
    expect((await refusal(developer.caller.apiKeys.rotate({ id: reporting }))).message).toMatch(
      /^Your role \(developer\) cannot give a key admin:read/,
    );
    const rotated = await members.admin.caller.apiKeys.rotate({ id: reporting });
    expect(rotated.key.createdBy?.email).toBe(members.admin.email);
  });
});

describe("removing a member and their keys", () => {
  it("lists the keys they created and revokes them with the removal when asked; otherwise they keep working", async () => {
    const { orgId, members } = await orgWithRoles();
    const one = await members.developer.caller.apiKeys.create({
      name: "Dev one",
      mode: "test",
      scopes: ["accounts:read"],
    });
    const two = await members.viewer.caller.team.members();
    expect(two.find((member) => member.userId === members.developer.userId)?.keys).toEqual([
      { id: one.key.id, name: "Dev one", prefix: one.key.prefix, isTest: true, serviceKey: false },
    ]);
    const kept = await members.admin.caller.apiKeys.create({ name: "Admin", mode: "live", scopes: ["accounts:read"] });

    const result = await members.owner.caller.team.removeMember({
      memberId: await memberIdOf(orgId, members.developer.userId),
      revokeKeys: true,
    });
    expect(result).toMatchObject({ removed: true, revokedKeys: 1 });
    expect((await client(server.url, one.raw)("GET", "/accounts?limit=1")).status).toBe(401);
    expect(
      await prisma().settingsAuditEntry.findFirst({
        where: { orgId, action: "apiKey.revoked" },
        select: { actorEmail: true, details: true },
      }),
    ).toEqual({
      actorEmail: members.owner.email,
      details: { mode: "test", keyId: one.key.id, reason: `${members.developer.email} was removed` },
    });

    // Without asking, a removed member's key is the organisation's and keeps working, naming its creator.
    await members.owner.caller.team.removeMember({ memberId: await memberIdOf(orgId, members.admin.userId) });
    expect((await client(server.url, kept.raw)("GET", "/accounts?limit=1")).status).toBe(200);
    expect((await members.owner.caller.apiKeys.list()).find((key) => key.id === kept.key.id)?.createdBy?.email).toBe(
      members.admin.email,
    );
  });

  it("an organisation service key survives its creator's removal with revokeKeys; their other key is revoked", async () => {
    const { orgId, members } = await orgWithRoles();
    const service = await members.developer.caller.apiKeys.create({
      name: "PSA sync",
      mode: "test",
      scopes: ["accounts:read"],
      serviceKey: true,
    });
    expect(service.key.serviceKey).toBe(true);
    const personal = await members.developer.caller.apiKeys.create({
      name: "Scratch",
      mode: "test",
      scopes: ["accounts:read"],
    });
    expect(personal.key.serviceKey).toBe(false);
    // The removal dialog tells the key that stays from the one it would revoke.
    const listed = (await members.owner.caller.team.members()).find((m) => m.userId === members.developer.userId);
    expect(listed?.keys.map((key) => [key.name, key.serviceKey])).toEqual([
      ["Scratch", false],
      ["PSA sync", true],
    ]);

    const result = await members.owner.caller.team.removeMember({
      memberId: await memberIdOf(orgId, members.developer.userId),
      revokeKeys: true,
    });
    expect(result).toMatchObject({ removed: true, revokedKeys: 1 });
    expect((await client(server.url, service.raw)("GET", "/accounts?limit=1")).status).toBe(200);
    expect((await client(server.url, personal.raw)("GET", "/accounts?limit=1")).status).toBe(401);
    const keys = await members.owner.caller.apiKeys.list();
    expect(keys.find((key) => key.id === service.key.id)).toMatchObject({ serviceKey: true, revokedAt: null });

    // Rotating a service key keeps it one.
    const rotated = await members.owner.caller.apiKeys.rotate({ id: service.key.id });
    expect(rotated.key.serviceKey).toBe(true);
  });
});

describe("one audit trail: what a key changes through /api/v1 is in the settings audit", () => {
  it("endpoints, secrets, test events and redeliveries by a key name the key, its creator and its address; the settings' too", async () => {
    const { orgId, members } = await orgWithRoles();
    // A live key: test keys send no webhooks (docs/api-contract.md §5.6).
    const { key, raw } = await members.admin.caller.apiKeys.create({
      name: "Automation",
      mode: "live",
      scopes: ["webhooks:write"],
    });
    const api = client(server.url, raw);
    const created = await api("POST", "/webhook-endpoints", { url: `${receiver.url}/api`, events: ["*"] });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect((await api("PATCH", `/webhook-endpoints/${id}`, { description: "by a key", enabled: false })).status).toBe(
      200,
    );
    expect((await api("POST", `/webhook-endpoints/${id}/rotate-secret`)).status).toBe(200);
    const tested = await api("POST", `/webhook-endpoints/${id}/test`);
    expect(tested.status).toBe(200);
    const deliveryId = tested.body.data.attempt.deliveryId as string;
    expect((await api("POST", `/deliveries/${deliveryId}/redeliver`)).status).toBe(200);
    expect((await api("DELETE", `/webhook-endpoints/${id}`)).status).toBe(200);

    const byKey = await prisma().settingsAuditEntry.findMany({
      where: { orgId, actorApiKeyId: key.id },
      select: { action: true, actorEmail: true, actorUserId: true, details: true },
      orderBy: { id: "asc" },
    });
    expect(byKey.map((entry) => entry.action)).toEqual([
      "webhookEndpoint.created",
      "webhookEndpoint.changed",
      "webhookEndpoint.changed",
      "webhookSecret.rotated",
      "webhookEndpoint.tested",
      "webhookDelivery.redelivered",
      "webhookEndpoint.deleted",
    ]);
    for (const entry of byKey) {
      expect(entry).toMatchObject({
        actorEmail: `API key ${key.prefix}… "Automation"`,
        actorUserId: null,
        details: { endpointId: id, keyCreatedBy: members.admin.email },
      });
    }
    // The audit trail shows where the key called from, as it does for a member: here the test's loopback socket.
    const trail = await members.owner.caller.audit.list({});
    const keyRows = trail.data.filter((entry) => entry.actorApiKeyId === key.id);
    expect(keyRows).toHaveLength(byKey.length);
    expect(new Set(keyRows.map((entry) => entry.ip))).toEqual(new Set(["127.0.0.1"]));
    expect(keyRows.every((entry) => entry.userAgent !== null)).toBe(true);

    // The same actions from the settings page, by the member.
    const endpoint = await members.developer.caller.webhooks.create({ url: `${receiver.url}/page`, events: ["*"] });
    const sent = await members.developer.caller.webhooks.sendTest({ id: endpoint.endpoint.id });
    await members.developer.caller.webhooks.redeliver({ deliveryId: sent.deliveryId });
    const byMember = await prisma().settingsAuditEntry.findMany({
      where: { orgId, actorUserId: members.developer.userId, action: { startsWith: "webhook" } },
      select: { action: true },
      orderBy: { id: "asc" },
    });
    expect(byMember.map((entry) => entry.action)).toEqual([
      "webhookEndpoint.created",
      "webhookEndpoint.tested",
      "webhookDelivery.redelivered",
    ]);
  });
});
