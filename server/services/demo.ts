import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { hashApiKey } from "../auth/api-keys";
import { FULL_ACCESS_SCOPES } from "../auth/scopes";
import { prisma } from "../db/client";
import { createApiKey } from "./api-keys";
import { ensureOrganisation } from "./organisations";
import { seedDemoBook } from "./seed";

/** Slug of the demo organisation that start-up seeds into an empty database (DESIGN.md §8). */
export const DEMO_ORG_SLUG = "demo";

/** What start-up prints about the demo organisation: its id and a working `msp_test_` key. */
export interface DemoCredentials {
  orgId: string;
  apiKey: string;
}

/**
 * Seeds the demo organisation (a `msp_test_` key with every write scope plus `admin:read`, and the demo MSP book of `seedDemoBook`) when
 * the database has no organisation yet, and returns a working demo key. The raw key is kept in
 * `<dataDir>/demo-credentials.json` so later starts print the same key; when that file is missing or its key was revoked,
 * a new key is issued. Returns null when the database holds other organisations but no demo one (a production database).
 */
export async function ensureDemo(dataDir: string): Promise<DemoCredentials | null> {
  const existing = await prisma().organisation.findUnique({ where: { slug: DEMO_ORG_SLUG }, select: { id: true } });
  if (!existing && (await prisma().organisation.count()) > 0) return null;

  const org = existing ?? (await ensureOrganisation(DEMO_ORG_SLUG, { name: "Demo MSP", plan: "GROWTH" }));
  if (!existing) await seedDemoBook(org.id);

  const file = path.resolve(dataDir, "demo-credentials.json");
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, "utf8")) as Partial<DemoCredentials>;
    if (saved.orgId === org.id && saved.apiKey) {
      const key = await prisma().apiKey.findUnique({
        where: { keyHash: hashApiKey(saved.apiKey) },
        select: { revokedAt: true },
      });
      if (key && !key.revokedAt) return { orgId: org.id, apiKey: saved.apiKey };
    }
  }
  const { raw } = await createApiKey(org.id, { name: "Demo key (start-up)", scopes: FULL_ACCESS_SCOPES, isTest: true });
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ orgId: org.id, apiKey: raw }, null, 2), { mode: 0o600 });
  return { orgId: org.id, apiKey: raw };
}
