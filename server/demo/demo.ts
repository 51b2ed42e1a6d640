import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { withStatementClass } from "../db/statement-budget";
import { prisma } from "../db/transaction";
import { hashApiKey } from "../platform/api-keys/format";
import { FULL_ACCESS_SCOPES } from "../platform/api-keys/scopes";
import { createApiKey } from "../platform/api-keys/service";
import { ensureOrganisation } from "../platform/organisations";
import { seedDemoBook } from "./seed";
import { bringDemoBookToToday } from "./today";

/**
 * Slug of the demo organisation that start-up seeds into an empty database (docs/architecture.md,
 * "Running in production").
 */
export const DEMO_ORG_SLUG = "demo";

const DEMO_ORGANISATION = { name: "Demo MSP", plan: "GROWTH" } as const;

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
  const file = path.resolve(dataDir, "demo-credentials.json");
  const saved: Partial<SavedCredentials> = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  const state = await demoState(saved.apiKey);
  if (!state.orgId && state.otherOrgs) return null;

  const orgId = state.orgId ?? (await ensureOrganisation(DEMO_ORG_SLUG, DEMO_ORGANISATION)).id;
  // A book with no owner yet came with the build's template (docs/architecture.md, "The embedded database"): it is
  // moved to the present first, before the key and the owner are made, so their own times stay as they are.
  // Maintenance work: no statement timeout (the embedded database at first start is slower than any budget).
  if (state.orgId && !state.ownerId) await withStatementClass("maintenance", () => bringDemoBookToToday(orgId));
  // The book is written by the database's own thread (the embedded one's worker, or PostgreSQL) while this thread
  // loads the sign-in library and hashes the owner's password: together, not one after the other.
  const seeding = state.orgId ? undefined : withStatementClass("maintenance", () => seedDemoBook(orgId));
  seeding?.catch(() => undefined);

  const sameOrg = saved.orgId === orgId;
  const keyWorks =
    sameOrg &&
    state.keyOrgId === orgId &&
    !state.keyRevokedAt &&
    (!state.keyExpiresAt || state.keyExpiresAt.getTime() > Date.now());
  const [apiKey, user] = await Promise.all([
    keyWorks && saved.apiKey ? saved.apiKey : newDemoKey(orgId),
    ensureDemoUser(orgId, sameOrg ? saved : {}, state),
  ]);
  await seeding;
  const credentials: DemoCredentials = { orgId, apiKey, email: DEMO_USER_EMAIL, password: user.password };
  const stored: SavedCredentials = { ...credentials, passwordHash: user.passwordHash };
  if (JSON.stringify(saved) !== JSON.stringify(stored)) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  }
  return credentials;
}

/**
 * Creates the demo organisation ({@link DEMO_ORG_SLUG}, "Demo MSP", Growth plan) and seeds its book (`seedDemoBook`),
 * without a key, a user or a secret: at the first start on an empty PostgreSQL database, and when `npm run build`
 * makes the embedded database's demo template (docs/architecture.md, "The embedded database").
 * @returns the organisation's id.
 */
export async function createDemoOrganisation(): Promise<string> {
  const { id } = await ensureOrganisation(DEMO_ORG_SLUG, DEMO_ORGANISATION);
  await withStatementClass("maintenance", () => seedDemoBook(id));
  return id;
}

/** What the database holds about the demo organisation, its saved key and its owner (null where there is none). */
interface DemoState {
  /** The demo organisation's id; null before the first start. */
  orgId: string | null;
  /** Whether organisations other than the demo one exist (a production database). */
  otherOrgs: boolean;
  /** The saved key's organisation, revocation and expiry; all null when no key was saved or it no longer exists. */
  keyOrgId: string | null;
  keyRevokedAt: Date | null;
  keyExpiresAt: Date | null;
  /** The owner's user id, whether it is a member of the demo organisation, and its stored password hash. */
  ownerId: string | null;
  ownerIsMember: boolean;
  ownerHash: string | null;
}

// One statement through Prisma's raw query: a restart makes no query of Prisma's query builder here, each of which
// would first be compiled by its WebAssembly query compiler (docs/architecture.md, "Running in production").
async function demoState(savedKey: string | undefined): Promise<DemoState> {
  const [row] = await prisma().$queryRawUnsafe<DemoState[]>(
    `WITH demo AS (SELECT "id" FROM "Organisation" WHERE "slug" = $1),
          saved AS (SELECT "orgId", "revokedAt", "expiresAt" FROM "ApiKey" WHERE "keyHash" = $2),
          owner AS (SELECT "id" FROM "User" WHERE "email" = $3)
     SELECT (SELECT "id" FROM demo) AS "orgId",
            EXISTS (SELECT 1 FROM "Organisation" WHERE "slug" <> $1) AS "otherOrgs",
            (SELECT "orgId" FROM saved) AS "keyOrgId",
            (SELECT "revokedAt" FROM saved) AS "keyRevokedAt",
            (SELECT "expiresAt" FROM saved) AS "keyExpiresAt",
            (SELECT "id" FROM owner) AS "ownerId",
            EXISTS (SELECT 1 FROM "Member" WHERE "userId" = (SELECT "id" FROM owner) AND "orgId" = (SELECT "id" FROM demo))
              AS "ownerIsMember",
            (SELECT "password" FROM "AuthAccount"
              WHERE "userId" = (SELECT "id" FROM owner) AND "providerId" = 'credential' LIMIT 1) AS "ownerHash"`,
    DEMO_ORG_SLUG,
    savedKey ? hashApiKey(savedKey) : "",
    DEMO_USER_EMAIL,
  );
  if (!row) throw new Error("the demo state query returned no row");
  return row;
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
  state: DemoState,
): Promise<{ password: string; passwordHash: string }> {
  // better-auth (about 0.6 s of CPU to import) is loaded only to check or set the password: a restart that finds the
  // saved hash unchanged needs none of it.
  const settings = async () => {
    const [{ defaultOrigin }, team] = await Promise.all([
      import("../identity/better-auth"),
      import("../identity/team/operator"),
    ]);
    return { origin: defaultOrigin(), ...team };
  };
  const userId = state.ownerId;
  if (userId && !state.ownerIsMember) throw new Error(`${DEMO_USER_EMAIL} belongs to another organisation`);
  const savedPassword = saved.password;
  const hash = state.ownerHash;
  if (userId && savedPassword && hash) {
    if (
      hash === saved.passwordHash ||
      (await settings().then(({ origin, passwordMatches }) => passwordMatches(origin, userId, savedPassword)))
    ) {
      return { password: savedPassword, passwordHash: hash };
    }
  }
  const password = randomBytes(18).toString("base64url");
  const { origin, setPassword, createMemberUser } = await settings();
  let ownerId = userId;
  if (ownerId) await setPassword(origin, ownerId, password);
  else
    ownerId = (
      await createMemberUser(origin, orgId, { email: DEMO_USER_EMAIL, password, name: "Demo owner", role: "owner" })
    ).userId;
  return { password, passwordHash: (await storedHash(ownerId)) ?? "" };
}
