// The client address the settings record, against the real PostgreSQL: a session and the audit trail keep the same
// text for it, an IPv6 address whole and in its RFC 5952 form (docs/architecture.md, "The REST facade"), whatever form
// the forwarding header carried.
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { closeDb } from "../../server/db/client";
import { createSettingsCaller } from "../../server/routers/settings";
import { ensureOrganisation } from "../../server/services/organisations";
import { addMember, signIn } from "../helpers/members";

afterAll(() => closeDb());

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
