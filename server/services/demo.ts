import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { hashApiKey } from "../auth/api-keys";
import { verifyPassword } from "../auth/passwords";
import { FULL_ACCESS_SCOPES } from "../auth/scopes";
import { prisma } from "../db/transaction";
import { createApiKey } from "./api-keys";
import { ensureOrganisation } from "./organisations";
import { seedDemoBook } from "./seed";
import { createUser, setUserPassword } from "./users";

/** Slug of the demo organisation that start-up seeds into an empty database (DESIGN.md §8). */
export const DEMO_ORG_SLUG = "demo";

/** Email of the demo organisation's settings user (issue #6). */
export const DEMO_USER_EMAIL = "demo@example.com";

/** What start-up prints about the demo organisation: its id, a working `msp_test_` key and the settings login. */
export interface DemoCredentials {
  orgId: string;
  apiKey: string;
  /** Sign-in of the demo settings user: `demo@example.com` and a generated password. */
  email: string;
  password: string;
}

/**
 * Seeds the demo organisation (a `msp_test_` key with every write scope plus `admin:read`, the demo MSP book of
 * `seedDemoBook`, and the settings user {@link DEMO_USER_EMAIL} with a generated 24-character password) when the
 * database has no organisation yet, and returns a working demo key and login. Key and password are kept in
 * `<dataDir>/demo-credentials.json` (mode 0600) so later starts print the same ones; when that file is missing, or
 * its key was revoked or its password no longer matches, a new key or password is issued. Returns null when the
 * database holds other organisations but no demo one (a production database).
 */
export async function ensureDemo(dataDir: string): Promise<DemoCredentials | null> {
  const existing = await prisma().organisation.findUnique({ where: { slug: DEMO_ORG_SLUG }, select: { id: true } });
  if (!existing && (await prisma().organisation.count()) > 0) return null;

  const org = existing ?? (await ensureOrganisation(DEMO_ORG_SLUG, { name: "Demo MSP", plan: "GROWTH" }));
  if (!existing) await seedDemoBook(org.id);

  const file = path.resolve(dataDir, "demo-credentials.json");
  const saved: Partial<SavedCredentials> = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  const sameOrg = saved.orgId === org.id;
  const apiKey =
    (sameOrg && saved.apiKey && (await demoKeyWorks(saved.apiKey)) && saved.apiKey) || (await newDemoKey(org.id));
  const user = await ensureDemoUser(org.id, sameOrg ? saved : {});
  const credentials: DemoCredentials = { orgId: org.id, apiKey, email: DEMO_USER_EMAIL, password: user.password };
  const stored: SavedCredentials = { ...credentials, passwordHash: user.passwordHash };
  if (JSON.stringify(saved) !== JSON.stringify(stored)) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  }
  return credentials;
}

async function demoKeyWorks(raw: string): Promise<boolean> {
  const key = await prisma().apiKey.findUnique({
    where: { keyHash: hashApiKey(raw) },
    select: { revokedAt: true, expiresAt: true },
  });
  return Boolean(key && !key.revokedAt && (!key.expiresAt || key.expiresAt.getTime() > Date.now()));
}

async function newDemoKey(orgId: string): Promise<string> {
  const { raw } = await createApiKey(orgId, { name: "Demo key (start-up)", scopes: FULL_ACCESS_SCOPES, isTest: true });
  return raw;
}

/**
 * What the credentials file holds: the printed credentials and the password's hash as stored when it was written, so
 * a restart that finds the same hash knows the password still signs in without a bcrypt comparison (~300 ms of CPU).
 */
interface SavedCredentials extends DemoCredentials {
  passwordHash: string;
}

// Returns the demo user's password and its stored hash: the saved password while it still signs in, else a new one
// set on the user.
async function ensureDemoUser(
  orgId: string,
  saved: Partial<SavedCredentials>,
): Promise<{ password: string; passwordHash: string }> {
  const user = await prisma().user.findUnique({
    where: { email: DEMO_USER_EMAIL },
    select: { id: true, orgId: true, passwordHash: true },
  });
  if (user && user.orgId !== orgId) throw new Error(`${DEMO_USER_EMAIL} belongs to another organisation`);
  if (user && saved.password) {
    const unchanged = saved.passwordHash === user.passwordHash;
    if (unchanged || (await verifyPassword(saved.password, user.passwordHash))) {
      return { password: saved.password, passwordHash: user.passwordHash };
    }
  }
  const password = randomBytes(18).toString("base64url");
  if (user) await setUserPassword(orgId, user.id, password);
  else await createUser(orgId, { email: DEMO_USER_EMAIL, password, name: "Demo user" });
  const { passwordHash } = await prisma().user.findUniqueOrThrow({
    where: { email: DEMO_USER_EMAIL },
    select: { passwordHash: true },
  });
  return { password, passwordHash };
}
