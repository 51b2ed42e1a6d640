// The roles table, cell by cell: every settings action called by a signed-in owner, admin, developer and viewer
// through the settings router (as the pages and /api/trpc call it), against the real PostgreSQL. An allowed cell
// runs and leaves its audit entry; a refused one is 403 in the page's words and an `action.refused` entry naming the
// actor. The table printed at the end is checked against the one docs/api-contract.md §5.10 publishes.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { readFileSync } from "node:fs";
import path from "node:path";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../../server/db/client";
import { prisma } from "../../../server/db/transaction";
import { resetEnvCache } from "../../../server/env";
import { authFor } from "../../../server/identity/better-auth";
import { ROLE_NAMES, type Role } from "../../../server/identity/roles";
import { createApiKey } from "../../../server/platform/api-keys/service";
import { createCustomField } from "../../../server/records/custom-fields/service";
import { createWebhookEndpoint, sendTestEvent } from "../../../server/webhooks/endpoints";
import { addMember, orgWithRoles, signIn, TEST_ORIGIN, type TestMember } from "../../helpers/members";
import { type Receiver, startReceiver } from "../../helpers/receiver";

resetEnvCache();

let receiver: Receiver;
let fixture: Awaited<ReturnType<typeof orgWithRoles>>;

beforeAll(async () => {
  receiver = await startReceiver();
  fixture = await orgWithRoles();
}, 60_000);

afterAll(async () => {
  await receiver.close();
  await closeDb();
});

/** One cell group: a settings action, the table row it belongs to, the roles allowed, and how to call it. */
interface Action {
  row: string;
  name: string;
  allowed: readonly Role[];
  /** The audit entry an allowed call writes (reads write none). */
  audit?: string;
  run(member: TestMember, org: { orgId: string; slug: string; owner: TestMember }): Promise<unknown>;
}

const ALL: readonly Role[] = ["owner", "admin", "developer", "viewer"];
const BUILDERS: readonly Role[] = ["owner", "admin", "developer"];
const MANAGERS: readonly Role[] = ["owner", "admin"];
const OWNER: readonly Role[] = ["owner"];

async function endpointIn(orgId: string) {
  return (await createWebhookEndpoint(orgId, { url: `${receiver.url}/hook`, events: ["*"] })).endpoint;
}

const key = async (orgId: string, isTest: boolean) =>
  (await createApiKey(orgId, { name: isTest ? "test fixture" : "live fixture", scopes: ["accounts:read"], isTest }))
    .key;

const fieldKey = () => `f_${Math.random().toString(36).slice(2, 12)}`;

async function fieldIn(orgId: string): Promise<string> {
  const created = await createCustomField(
    orgId,
    { resource: "deal", key: fieldKey(), label: "Fixture field", type: "number" },
    { isTest: false },
  );
  return created.id;
}

const email = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}@example.com`;

const ACTIONS: Action[] = [
  { row: "own security", name: "me", allowed: ALL, run: (m) => m.caller.me() },
  { row: "own security", name: "security.overview", allowed: ALL, run: (m) => m.caller.security.overview() },
  {
    row: "own security",
    name: "security.startTotp",
    allowed: ALL,
    run: (m) => m.caller.security.startTotp({ password: m.password }),
  },
  {
    row: "own security",
    name: "security.confirm",
    allowed: ALL,
    run: (m) => m.caller.security.confirm({ password: m.password }),
  },
  {
    row: "own security",
    name: "security.revokeSession",
    allowed: ALL,
    audit: "session.revoked",
    run: async (m) => {
      const other = await signIn(m.email, m.password);
      const session = await authFor(TEST_ORIGIN).api.getSession({ headers: other.headers });
      return m.caller.security.revokeSession({ id: session?.session.id as string });
    },
  },
  { row: "see", name: "apiKeys.list", allowed: ALL, run: (m) => m.caller.apiKeys.list() },
  { row: "see", name: "webhooks.list", allowed: ALL, run: (m) => m.caller.webhooks.list() },
  {
    row: "see",
    name: "webhooks.get",
    allowed: ALL,
    run: async (m, { orgId }) => m.caller.webhooks.get({ id: (await endpointIn(orgId)).id }),
  },
  {
    row: "see",
    name: "webhooks.deliveries",
    allowed: ALL,
    run: async (m, { orgId }) => m.caller.webhooks.deliveries({ endpointId: (await endpointIn(orgId)).id }),
  },
  { row: "see", name: "webhooks.worker", allowed: ALL, run: (m) => m.caller.webhooks.worker() },
  { row: "see", name: "webhooks.health", allowed: ALL, run: (m) => m.caller.webhooks.health() },
  { row: "see", name: "webhooks.alerts", allowed: ALL, run: (m) => m.caller.webhooks.alerts() },
  {
    row: "see",
    name: "webhooks.stats",
    allowed: ALL,
    run: async (m, { orgId }) => m.caller.webhooks.stats({ id: (await endpointIn(orgId)).id, range: "24h" }),
  },
  {
    row: "see",
    name: "webhooks.deliveryList",
    allowed: ALL,
    run: async (m, { orgId }) => m.caller.webhooks.deliveryList({ id: (await endpointIn(orgId)).id }),
  },
  {
    row: "see",
    name: "webhooks.replayCount",
    allowed: ALL,
    run: async (m, { orgId }) =>
      m.caller.webhooks.replayCount({
        id: (await endpointIn(orgId)).id,
        since: new Date(Date.now() - 3_600_000).toISOString(),
      }),
  },
  {
    row: "see",
    name: "webhooks.waiting",
    allowed: ALL,
    run: async (m, { orgId }) => m.caller.webhooks.waiting({ id: (await endpointIn(orgId)).id }),
  },
  { row: "see", name: "usage.auditLog", allowed: ALL, run: (m) => m.caller.usage.auditLog({}) },
  { row: "see", name: "usage.limits", allowed: ALL, run: (m) => m.caller.usage.limits() },
  { row: "see", name: "usage.lastDay", allowed: ALL, run: (m) => m.caller.usage.lastDay() },
  { row: "see", name: "usage.series", allowed: ALL, run: (m) => m.caller.usage.series({ granularity: "3h" }) },
  { row: "see", name: "usage.export", allowed: ALL, run: (m) => m.caller.usage.export({}) },
  {
    row: "see",
    name: "usage.request",
    allowed: ALL,
    run: async (m, { orgId }) => {
      const call = await prisma().auditLog.create({
        data: { orgId, requestId: "req_roles", method: "GET", path: "/api/v1/mrr", status: 200, durationMs: 3 },
      });
      return m.caller.usage.request({ id: call.id.toString() });
    },
  },
  { row: "see", name: "team.members", allowed: ALL, run: (m) => m.caller.team.members() },
  { row: "see", name: "customFields.list", allowed: ALL, run: (m) => m.caller.customFields.list() },

  {
    row: "test keys",
    name: "apiKeys.create (test)",
    allowed: BUILDERS,
    audit: "apiKey.created",
    run: (m) => m.caller.apiKeys.create({ name: "T", mode: "test", scopes: ["accounts:read"] }),
  },
  {
    row: "test keys",
    name: "apiKeys.rotate (test)",
    allowed: BUILDERS,
    audit: "apiKey.rotated",
    run: async (m, { orgId }) => m.caller.apiKeys.rotate({ id: (await key(orgId, true)).id }),
  },
  {
    row: "test keys",
    name: "apiKeys.revoke (test)",
    allowed: BUILDERS,
    audit: "apiKey.revoked",
    run: async (m, { orgId }) => m.caller.apiKeys.revoke({ id: (await key(orgId, true)).id }),
  },

  {
    row: "admin scope",
    name: "apiKeys.create (test, admin:read)",
    allowed: MANAGERS,
    audit: "apiKey.created",
    run: (m) => m.caller.apiKeys.create({ name: "A", mode: "test", scopes: ["admin:read"] }),
  },
  {
    row: "admin scope",
    name: "apiKeys.rotate (test, admin:read)",
    allowed: MANAGERS,
    audit: "apiKey.rotated",
    run: async (m, { orgId }) =>
      m.caller.apiKeys.rotate({
        id: (await createApiKey(orgId, { name: "admin read", scopes: ["admin:read"], isTest: true })).key.id,
      }),
  },

  {
    row: "live keys",
    name: "apiKeys.create (live)",
    allowed: MANAGERS,
    audit: "apiKey.created",
    run: (m) => m.caller.apiKeys.create({ name: "L", mode: "live", scopes: ["accounts:read"] }),
  },
  {
    row: "live keys",
    name: "apiKeys.rotate (live)",
    allowed: MANAGERS,
    audit: "apiKey.rotated",
    run: async (m, { orgId }) => m.caller.apiKeys.rotate({ id: (await key(orgId, false)).id }),
  },
  {
    row: "live keys",
    name: "apiKeys.revoke (live)",
    allowed: MANAGERS,
    audit: "apiKey.revoked",
    run: async (m, { orgId }) => m.caller.apiKeys.revoke({ id: (await key(orgId, false)).id }),
  },

  {
    row: "endpoints",
    name: "webhooks.create",
    allowed: BUILDERS,
    audit: "webhookEndpoint.created",
    run: (m) => m.caller.webhooks.create({ url: `${receiver.url}/new`, events: ["account.created"] }),
  },
  {
    row: "endpoints",
    name: "webhooks.update",
    allowed: BUILDERS,
    audit: "webhookEndpoint.changed",
    run: async (m, { orgId }) => m.caller.webhooks.update({ id: (await endpointIn(orgId)).id, description: "edited" }),
  },
  {
    row: "endpoints",
    name: "webhooks.setEnabled",
    allowed: BUILDERS,
    audit: "webhookEndpoint.changed",
    run: async (m, { orgId }) => m.caller.webhooks.setEnabled({ id: (await endpointIn(orgId)).id, enabled: false }),
  },
  {
    row: "endpoints",
    name: "webhooks.delete",
    allowed: BUILDERS,
    audit: "webhookEndpoint.deleted",
    run: async (m, { orgId }) => m.caller.webhooks.delete({ id: (await endpointIn(orgId)).id }),
  },
  {
    row: "endpoints",
    name: "webhooks.revealSecret",
    allowed: BUILDERS,
    audit: "webhookSecret.revealed",
    run: async (m, { orgId }) => m.caller.webhooks.revealSecret({ id: (await endpointIn(orgId)).id }),
  },
  {
    row: "endpoints",
    name: "webhooks.rotateSecret",
    allowed: BUILDERS,
    audit: "webhookSecret.rotated",
    run: async (m, { orgId }) => m.caller.webhooks.rotateSecret({ id: (await endpointIn(orgId)).id }),
  },
  {
    row: "endpoints",
    name: "webhooks.sendTest",
    allowed: BUILDERS,
    audit: "webhookEndpoint.tested",
    run: async (m, { orgId }) => m.caller.webhooks.sendTest({ id: (await endpointIn(orgId)).id }),
  },
  {
    row: "endpoints",
    name: "webhooks.redeliver",
    allowed: BUILDERS,
    audit: "webhookDelivery.redelivered",
    run: async (m, { orgId }) => {
      const sent = await sendTestEvent(orgId, (await endpointIn(orgId)).id);
      return m.caller.webhooks.redeliver({ deliveryId: sent.deliveryId });
    },
  },
  {
    row: "endpoints",
    name: "webhooks.replayStart",
    allowed: BUILDERS,
    audit: "webhookReplay.started",
    run: async (m, { orgId }) =>
      m.caller.webhooks.replayStart({
        id: (await endpointIn(orgId)).id,
        since: new Date(Date.now() - 3_600_000).toISOString(),
      }),
  },
  {
    row: "endpoints",
    name: "webhooks.replayCancel",
    allowed: BUILDERS,
    run: async (m, { orgId, owner }) => {
      const endpoint = await endpointIn(orgId);
      const replay = await owner.caller.webhooks.replayStart({
        id: endpoint.id,
        since: new Date(Date.now() - 3_600_000).toISOString(),
      });
      return m.caller.webhooks.replayCancel({ id: endpoint.id, replayId: replay.id });
    },
  },

  {
    row: "custom fields",
    name: "customFields.create",
    allowed: MANAGERS,
    audit: "customField.created",
    run: (m) =>
      m.caller.customFields.create({ resource: "account", key: fieldKey(), label: "Role field", type: "text" }),
  },
  {
    row: "custom fields",
    name: "customFields.update",
    allowed: MANAGERS,
    audit: "customField.changed",
    run: async (m, { orgId }) => m.caller.customFields.update({ id: await fieldIn(orgId), label: "Renamed field" }),
  },
  {
    row: "custom fields",
    name: "customFields.archive",
    allowed: MANAGERS,
    audit: "customField.archived",
    run: async (m, { orgId }) => m.caller.customFields.archive({ id: await fieldIn(orgId) }),
  },

  {
    row: "team",
    name: "team.invitations",
    allowed: MANAGERS,
    run: (m) => m.caller.team.invitations(),
  },
  {
    row: "team",
    name: "team.invite",
    allowed: MANAGERS,
    audit: "invitation.created",
    run: (m) => m.caller.team.invite({ email: email("invitee"), role: "developer" }),
  },
  {
    row: "team",
    name: "team.resendInvitation",
    allowed: MANAGERS,
    audit: "invitation.created",
    run: async (m, { owner }) => {
      const { email: invited } = await owner.caller.team.invite({ email: email("resend"), role: "viewer" });
      return m.caller.team.resendInvitation({ email: invited });
    },
  },
  {
    row: "team",
    name: "team.revokeInvitation",
    allowed: MANAGERS,
    audit: "invitation.revoked",
    run: async (m, { owner }) => {
      const { email: invited } = await owner.caller.team.invite({ email: email("revoke"), role: "viewer" });
      return m.caller.team.revokeInvitation({ email: invited });
    },
  },
  {
    row: "team",
    name: "team.changeRole",
    allowed: MANAGERS,
    audit: "member.roleChanged",
    run: async (m, { orgId }) => {
      const target = await addMember(orgId, "developer", "target");
      const row = await prisma().member.findFirstOrThrow({ where: { orgId, userId: target.userId } });
      return m.caller.team.changeRole({ memberId: row.id, role: "viewer" });
    },
  },
  {
    row: "team",
    name: "team.removeMember",
    allowed: MANAGERS,
    audit: "member.removed",
    run: async (m, { orgId }) => {
      const target = await addMember(orgId, "viewer", "target");
      const row = await prisma().member.findFirstOrThrow({ where: { orgId, userId: target.userId } });
      return m.caller.team.removeMember({ memberId: row.id });
    },
  },
  {
    row: "team",
    name: "team.setRequireTwoFactor",
    allowed: MANAGERS,
    audit: "organisation.settingsChanged",
    run: (m) => m.caller.team.setRequireTwoFactor({ required: false }),
  },
  { row: "team", name: "audit.list", allowed: MANAGERS, run: (m) => m.caller.audit.list({}) },
  { row: "team", name: "audit.actors", allowed: MANAGERS, run: (m) => m.caller.audit.actors() },

  {
    row: "owner",
    name: "team.transferOwnership",
    allowed: OWNER,
    audit: "organisation.ownershipTransferred",
    run: async (m, { orgId }) => {
      const target = await addMember(orgId, "admin", "heir");
      const row = await prisma().member.findFirstOrThrow({ where: { orgId, userId: target.userId } });
      return m.caller.team.transferOwnership({ memberId: row.id });
    },
  },
  {
    row: "owner",
    name: "team.deleteOrganisation",
    allowed: OWNER,
    run: (m, { slug }) => m.caller.team.deleteOrganisation({ confirm: slug }),
  },
];

// Actions that change the organisation as a whole (its owner, its existence) run in an organisation of their own.
const ISOLATED = new Set(["team.transferOwnership", "team.deleteOrganisation", "team.setRequireTwoFactor"]);

const results: { action: string; role: Role; outcome: "allowed" | "refused" }[] = [];

describe("every settings action with every role", () => {
  for (const action of ACTIONS) {
    for (const role of ROLE_NAMES) {
      const expected = action.allowed.includes(role) ? "allowed" : "refused";
      it(`${action.name} as ${role}: ${expected}`, { timeout: 60_000 }, async () => {
        const org = ISOLATED.has(action.name) ? await orgWithRoles() : fixture;
        const member = org.members[role];
        const context = { orgId: org.orgId, slug: org.slug, owner: org.members.owner };
        const before = new Date(Date.now() - 1);
        let error: unknown = null;
        try {
          await action.run(member, context);
        } catch (caught) {
          error = caught;
        }
        const refused = error instanceof TRPCError && error.code === "FORBIDDEN";
        if (!refused && error) throw error;
        results.push({ action: action.name, role, outcome: refused ? "refused" : "allowed" });
        expect(refused ? "refused" : "allowed").toBe(expected);
        if (action.name === "team.deleteOrganisation" && !refused) {
          expect(await prisma().organisation.count({ where: { id: org.orgId } })).toBe(0);
          return;
        }
        const entries = await prisma().settingsAuditEntry.findMany({
          where: { orgId: org.orgId, actorUserId: member.userId, createdAt: { gte: before } },
          select: { action: true, actorEmail: true, details: true },
        });
        if (refused) {
          expect((error as TRPCError).message).toMatch(
            new RegExp(`^Your role \\(${role}\\) cannot .+: ask an owner or admin`),
          );
          expect(entries).toContainEqual({
            action: "action.refused",
            actorEmail: member.email,
            details: expect.objectContaining({ reason: (error as TRPCError).message }),
          });
        } else {
          expect(entries.filter((entry) => entry.action === "action.refused")).toEqual([]);
          if (action.audit) expect(entries.map((entry) => entry.action)).toContain(action.audit);
        }
      });
    }
  }

  it("the table as tested is the roles table of docs/api-contract.md §5.10, cell by cell", () => {
    const rows = ACTIONS.map((action) => {
      const cells = ROLE_NAMES.map((role) => {
        const found = results.find((result) => result.action === action.name && result.role === role);
        return found?.outcome === "allowed" ? "✓" : found ? "—" : "?";
      });
      return { action, cells };
    });
    console.log(
      [
        `| row | action | ${ROLE_NAMES.join(" | ")} |`,
        "|---|---|---|---|---|---|",
        ...rows.map(({ action, cells }) => `| ${action.row} | ${action.name} | ${cells.join(" | ")} |`),
      ].join("\n"),
      `\n${results.length} cells (${ACTIONS.length} actions × ${ROLE_NAMES.length} roles)`,
    );
    expect(results).toHaveLength(ACTIONS.length * ROLE_NAMES.length);

    // The published table: each of its rows names what the actions of one row here do.
    const contract = readFileSync(path.resolve(import.meta.dirname, "../../../docs/api-contract.md"), "utf8");
    const section = contract.slice(contract.indexOf("### §5.10"));
    const published = section
      .split("\n")
      .filter((line) => /^\| .*(✓|—) \|$/.test(line))
      .map((line) => line.split("|").map((cell) => cell.trim()));
    const ROW_OF: Array<[RegExp, string]> = [
      [/^see keys/, "see"],
      [/\*\*test\*\* keys/, "test keys"],
      [/\*\*live\*\* keys/, "live keys"],
      [/`admin:read`/, "admin scope"],
      [/endpoints, reveal and rotate secrets/, "endpoints"],
      [/^create \/ change \/ archive custom fields/, "custom fields"],
      [/^invite, remove members/, "team"],
      [/^transfer ownership/, "owner"],
    ];
    expect(published.map((cells) => ROW_OF.find(([pattern]) => pattern.test(cells[1] ?? ""))?.[1])).toEqual(
      ROW_OF.map(([, row]) => row),
    );
    for (const cells of published) {
      const row = ROW_OF.find(([pattern]) => pattern.test(cells[1] ?? ""))?.[1];
      const marks = cells.slice(2, 2 + ROLE_NAMES.length);
      const tested = rows.filter(({ action }) => action.row === row);
      expect(tested.length, `actions tested for "${row}"`).toBeGreaterThan(0);
      for (const { action, cells: outcome } of tested) expect(outcome, `${row}: ${action.name}`).toEqual(marks);
    }
  });
});
