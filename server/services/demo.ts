import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { hashApiKey } from "../auth/api-keys";
import { FULL_ACCESS_SCOPES } from "../auth/scopes";
import { prisma } from "../db/transaction";
import { createApiKey } from "./api-keys";
import { ensureOrganisation } from "./organisations";
import { seedDemoBook } from "./seed";

/**
 * Slug of the demo organisation that start-up seeds into an empty database (docs/architecture.md,
 * "Running in production").
 */
export const DEMO_ORG_SLUG = "demo";

/** Email of the demo organisation's owner, the settings login start-up prints. */
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
 * `seedDemoBook`, and its owner {@link DEMO_USER_EMAIL} with a generated 24-character password) when the
 * database has no organisation yet, and returns a working demo key and login. Key and password are kept in
 * `<dataDir>/demo-credentials.json` (mode 0600) so later starts print the same ones; when that file is missing, or
 * its key was revoked or its password no longer matches, a new key or password is issued. Returns null when the
 * database holds other organisations but no demo one (a production database).
 */
export async function ensureDemo(dataDir: string): Promise<DemoCredentials | null> {
  const existing = await prisma().organisation.findUnique({ where: { slug: DEMO_ORG_SLUG }, select: { id: true } });
  if (!existing && (await prisma().organisation.count()) > 0) return null;

  const org = existing ?? (await ensureOrganisation(DEMO_ORG_SLUG, { name: "Demo MSP", plan: "GROWTH" }));
  // The book is written by the database's own thread (the embedded one's worker, or PostgreSQL) while this thread
  // loads the sign-in library and hashes the owner's password: together, not one after the other.
  const seeding = existing ? undefined : seedDemoBook(org.id);
  seeding?.catch(() => undefined);

  const file = path.resolve(dataDir, "demo-credentials.json");
  const saved: Partial<SavedCredentials> = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  const sameOrg = saved.orgId === org.id;
  const [apiKey, user] = await Promise.all([
    (async () =>
      (sameOrg && saved.apiKey && (await demoKeyWorks(saved.apiKey)) && saved.apiKey) || (await newDemoKey(org.id)))(),
    ensureDemoUser(org.id, sameOrg ? saved : {}),
  ]);
  await seeding;
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
 * a restart that finds the same hash knows the password still signs in without a password check (~300 ms of CPU).
 */
interface SavedCredentials extends DemoCredentials {
  passwordHash: string;
}

// The demo owner's stored credential hash (better-auth's credential account), or null when it has none.
async function storedHash(userId: string): Promise<string | null> {
  const account = await prisma().authAccount.findFirst({
    where: { userId, providerId: "credential" },
    select: { password: true },
  });
  return account?.password ?? null;
}

// Returns the demo owner's password and its stored hash: the saved password while it still signs in, else a new one
// set on the user.
async function ensureDemoUser(
  orgId: string,
  saved: Partial<SavedCredentials>,
): Promise<{ password: string; passwordHash: string }> {
  // better-auth (about 0.6 s of CPU to import) is loaded only to check or set the password: a restart that finds the
  // saved hash unchanged needs none of it.
  const settings = async () => {
    const [{ defaultOrigin }, team] = await Promise.all([import("./auth"), import("./team")]);
    return { origin: defaultOrigin(), ...team };
  };
  const user = await prisma().user.findUnique({
    where: { email: DEMO_USER_EMAIL },
    select: { id: true, members: { select: { orgId: true } } },
  });
  if (user && !user.members.some((member) => member.orgId === orgId)) {
    throw new Error(`${DEMO_USER_EMAIL} belongs to another organisation`);
  }
  const savedPassword = saved.password;
  if (user && savedPassword) {
    const hash = await storedHash(user.id);
    if (
      hash &&
      (hash === saved.passwordHash ||
        (await settings().then(({ origin, passwordMatches }) => passwordMatches(origin, user.id, savedPassword))))
    ) {
      return { password: savedPassword, passwordHash: hash };
    }
  }
  const password = randomBytes(18).toString("base64url");
  let userId = user?.id;
  const { origin, setPassword, createMemberUser } = await settings();
  if (userId) await setPassword(origin, userId, password);
  else
    userId = (
      await createMemberUser(origin, orgId, { email: DEMO_USER_EMAIL, password, name: "Demo owner", role: "owner" })
    ).userId;
  return { password, passwordHash: (await storedHash(userId)) ?? "" };
}
