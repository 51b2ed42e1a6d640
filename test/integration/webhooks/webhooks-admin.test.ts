// `npm run admin -- create-webhook`, run in this process (test/helpers/admin.ts).
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { getWebhookEndpoint, revealWebhookSecret } from "../../../server/webhooks/endpoints";
import { admin } from "../../helpers/admin";

it("create-webhook creates an enabled endpoint and prints its id and secret", { timeout: 60_000 }, async () => {
  const slug = `hooks-${randomBytes(4).toString("hex")}`;
  const { stdout } = await admin(
    "create-webhook",
    "--org",
    slug,
    "--url",
    "https://hooks.example.com/crm",
    "--events",
    "account.created, deal.closed_won",
    "--json",
  );
  const printed = JSON.parse(stdout.trim());
  expect(printed).toEqual({
    orgId: expect.any(String),
    id: expect.stringMatching(/^wh_[0-9a-f]{24}$/),
    url: "https://hooks.example.com/crm",
    events: ["account.created", "deal.closed_won"],
    secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
  });
  expect((await prisma().organisation.findUniqueOrThrow({ where: { slug } })).id).toBe(printed.orgId);
  expect(await getWebhookEndpoint(printed.orgId, printed.id)).toMatchObject({ enabled: true, url: printed.url });
  expect((await revealWebhookSecret(printed.orgId, printed.id)).secret).toBe(printed.secret);

  const all = await admin("create-webhook", "--org", slug, "--url", "https://hooks.example.com/all", "--events", "*");
  expect(all.stdout).toMatch(/Webhook wh_[0-9a-f]{24} → https:\/\/hooks\.example\.com\/all \(\*\)/);
  expect(all.stdout).toMatch(/signing secret: whsec_[A-Za-z0-9+/]{43}=/);
});

it("create-webhook refuses unknown events and bad URLs with the field named and exit code 1", {
  timeout: 60_000,
}, async () => {
  const slug = `hooks-${randomBytes(4).toString("hex")}`;
  const failure = await admin(
    "create-webhook",
    "--org",
    slug,
    "--url",
    "ftp://nope",
    "--events",
    "account.created,health.changed",
  ).catch((error: { code: number; stderr: string }) => error);
  expect(failure).toMatchObject({ code: 1 });
  const { stderr } = failure as { stderr: string };
  expect(stderr).toContain("url: must use http or https");
  expect(stderr).toContain("events.1: unknown event");
  const missing = await admin("create-webhook", "--org", slug, "--url", "https://x.example").catch(
    (error: { code: number; stderr: string }) => error,
  );
  expect(missing).toMatchObject({ code: 2 });
  expect((missing as { stderr: string }).stderr).toContain("--events is required");
  const org = await prisma().organisation.findUnique({ where: { slug }, select: { id: true } });
  expect(await prisma().webhookEndpoint.count({ where: { orgId: org?.id ?? "none" } })).toBe(0);
});
