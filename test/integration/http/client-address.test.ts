// The client address the API and the settings record and count, against the real PostgreSQL and Redis: a session and
// the audit trail keep the same text for it, an IPv6 address whole and in its RFC 5952 form (docs/architecture.md,
// "The REST facade"), whatever form the forwarding header carried; behind a trusted proxy, the address that proxy
// wrote (with or without a port), never one the client wrote before it.

// The test client stands for one proxy in front of the server, whose X-Forwarded-For entry is believed; a small
// anonymous window, so a test can fill one. The windows are this file's own (its key prefix): test files running at
// the same time in another worker send anonymous requests from 127.0.0.1 too, which would count in the proxy's window.
process.env.TRUST_PROXY = "1";
process.env.RATE_LIMIT_ANONYMOUS_PER_MIN = "5";
process.env.KV_PREFIX = `${process.env.KV_PREFIX ?? "test:"}client-address-${process.pid}:`;
resetEnvCache();

import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../../server/db/client";
import { prisma } from "../../../server/db/transaction";
import { resetEnvCache } from "../../../server/env";
import { stampClientAddress } from "../../../server/http/origin";
import { ATTEMPT_LIMITS } from "../../../server/identity/attempts";
import { authFor } from "../../../server/identity/better-auth";
import { CLIENT_ADDRESS_HEADER, canonicalAddress } from "../../../server/platform/client-address";
import { ensureOrganisation } from "../../../server/platform/organisations";
import { flushAudit } from "../../../server/platform/request-log/record";
import { createSettingsCaller } from "../../../server/settings/router";
import { client, forgedKey, startApi, type TestServer } from "../../helpers/api";
import { addMember, signIn, TEST_ORIGIN } from "../../helpers/members";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(async () => {
  await server?.close();
  await closeDb();
});

/** An address of this run's own (TEST-NET-2 / the documentation prefix), so no other test shares its windows. */
const ipv4 = () => `198.51.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
const ipv6 = () =>
  canonicalAddress(`2001:db8:${randomBytes(2).toString("hex")}::${randomBytes(2).toString("hex")}`) as string;

/** The request-log rows of the answers with these request ids: their client addresses. */
async function loggedAddresses(requestIds: string[]): Promise<Array<string | null>> {
  await flushAudit();
  const rows = await prisma().auditLog.findMany({ where: { requestId: { in: requestIds } }, select: { ip: true } });
  return rows.map((row) => row.ip);
}

describe("client addresses in the settings", () => {
  it("a session from IPv6 keeps the whole address, written as the audit trail writes it", async () => {
    const org = await ensureOrganisation(`address-${randomBytes(5).toString("hex")}`);
    const owner = await addMember(org.id, "owner");
    // better-auth alone would store its rate-limit key: the /64, 2001:0db8:0000:0000:0000:0000:0000:0000.
    const laptop = await signIn(owner.email, owner.password, "2001:DB8:0:0:0:0:0:23");
    const caller = createSettingsCaller({ request: laptop });
    const session = (await caller.security.overview()).sessions.find((listed) => listed.current);
    expect(session?.ipAddress).toBe("2001:db8::23");
    const signIns = await caller.audit.list({ action: "signin.succeeded" });
    expect(signIns.data.map((entry) => entry.ip)).toContain("2001:db8::23");
  });
});

describe("behind a proxy that writes ports (Azure Application Gateway) or no address", () => {
  for (const [form, address, entry] of [
    ["ip:port", ipv4(), (ip: string) => `${ip}:52814`],
    ["[v6]:port", ipv6(), (ip: string) => `[${ip}]:52814`],
  ] as const) {
    it(`the API counts and records the address the proxy wrote (${form}), whatever the client wrote before it`, async () => {
      const statuses: number[] = [];
      const requestIds: string[] = [];
      // Each request claims another address of its own choosing before the proxy's entry.
      for (let i = 0; i < 6; i++) {
        const res = await client(server.url, forgedKey())("GET", "/accounts", undefined, {
          "X-Forwarded-For": `${ipv4()}, ${entry(address)}`,
        });
        statuses.push(res.status);
        requestIds.push(res.body.requestId);
      }
      // One window, the proxy's client's: five anonymous requests a minute, then 429.
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
      expect(await loggedAddresses(requestIds)).toEqual(Array(6).fill(address));
    });
  }

  it("an entry that is no address (`unknown`) stands for the proxy that wrote it, not for the client's entry", async () => {
    const spoofed = ipv4();
    const res = await client(server.url)("GET", "/accounts", undefined, { "X-Forwarded-For": `${spoofed}, unknown` });
    expect(res.status).toBe(401);
    // The proxy here is the test client, on loopback.
    expect(await loggedAddresses([res.body.requestId])).toEqual(["127.0.0.1"]);
  });

  it(`the settings sign-in counts attempts under the proxy's entry: the ${ATTEMPT_LIMITS.perAccountAndAddress + 1}th is refused, whatever the client wrote`, async () => {
    const org = await ensureOrganisation(`address-${randomBytes(5).toString("hex")}`);
    const member = await addMember(org.id, "viewer", "behind-gateway");
    const address = ipv4();
    // A page request as `npm start` receives it from the gateway, with a client-written first entry and a client-set
    // address header, both different every time; the server stamps the address it believes.
    const attempt = (password: string) => {
      const headers: IncomingHttpHeaders = {
        "x-forwarded-for": `${ipv4()}, ${address}:${1024 + (randomBytes(2).readUInt16BE() % 60000)}`,
        [CLIENT_ADDRESS_HEADER]: ipv4(),
        "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0 Safari/537.36",
      };
      stampClientAddress(headers, "10.0.0.2");
      return authFor(TEST_ORIGIN).api.signInEmail({
        headers: new Headers(headers as Record<string, string>),
        body: { email: member.email, password },
      });
    };
    for (let i = 0; i < ATTEMPT_LIMITS.perAccountAndAddress; i++) {
      await expect(attempt(`wrong password ${i}`)).rejects.toMatchObject({ statusCode: 401 });
    }
    await expect(attempt(member.password)).rejects.toMatchObject({
      statusCode: 429,
      message: expect.stringMatching(/^Too many attempts: wait 1[45] minutes and try again$/),
    });
    const failed = await prisma().settingsAuditEntry.findMany({
      where: { orgId: org.id, actorUserId: member.userId, action: "signin.failed" },
      select: { ip: true },
    });
    expect(failed.map((entry) => entry.ip)).toEqual(Array(ATTEMPT_LIMITS.perAccountAndAddress + 1).fill(address));
  });
});
