// What a process needs to tell a key worth a lookup from one that is not, without the database (docs/architecture.md,
// "API keys and the key cache"): the checksum secret new keys are made with, and the hashes of the first-format keys
// still usable. Both are read once per process, in one statement, when it starts (or at its first key).
import { createSecretKey, type KeyObject, randomBytes } from "node:crypto";
import { db } from "../../db/client";
import { outsideTransaction, prisma } from "../../db/transaction";

/** What the process recognises keys by. */
export interface KeyRecognition {
  /** The service's checksum secret (the `ApiKeyChecksumSecret` row, 32 bytes) as an HMAC key. */
  checksumSecret: KeyObject;
  /**
   * SHA-256 hex hashes of the first-format keys (CRC32 checksum) that were neither revoked nor expired when the
   * process read them. No key of that format is issued any more, so the set can only have shrunk since: a stale entry
   * only lets a key that has since been revoked reach the lookup that refuses it.
   */
  legacyKeyHashes: ReadonlySet<string>;
}

interface RecognitionState {
  /** The database the recognition was read from: a process that reopens another one (tests) reads it again. */
  database?: object;
  loading?: Promise<KeyRecognition>;
}

// One per process: Next.js may instantiate this module in more than one bundle.
const holder = globalThis as unknown as { __crmKeyRecognition?: RecognitionState };
holder.__crmKeyRecognition ??= {};
const state = holder.__crmKeyRecognition;

/** Tries of the read: a first start racing another's insert of the secret may see neither row nor insert once. */
const READ_TRIES = 3;

async function read(): Promise<KeyRecognition> {
  for (let attempt = 1; ; attempt++) {
    // One statement: the secret is inserted when there is none yet (the first start), else kept; two first starts at
    // once keep the first one's. A raw query, so a restart compiles no query of Prisma's query builder for it.
    const [row] = await outsideTransaction(() =>
      prisma().$queryRawUnsafe<Array<{ secret: string | null; legacy: string[] }>>(
        `WITH made AS (
           INSERT INTO "ApiKeyChecksumSecret" ("id", "secret") VALUES (1, $1)
           ON CONFLICT ("id") DO NOTHING RETURNING "secret"
         )
         SELECT COALESCE((SELECT "secret" FROM made),
                         (SELECT "secret" FROM "ApiKeyChecksumSecret" WHERE "id" = 1)) AS "secret",
                ARRAY(SELECT "keyHash" FROM "ApiKey"
                      WHERE NOT "checksumKeyed" AND "revokedAt" IS NULL
                        AND ("expiresAt" IS NULL OR "expiresAt" > now())) AS "legacy"`,
        randomBytes(32).toString("base64url"),
      ),
    );
    // Null when another process's insert committed after this statement's snapshot was taken: read again.
    if (row?.secret) {
      return {
        checksumSecret: createSecretKey(Buffer.from(row.secret, "base64url")),
        legacyKeyHashes: new Set(row.legacy),
      };
    }
    if (attempt >= READ_TRIES) throw new Error("the API key checksum secret could not be read");
  }
}

/**
 * The process's {@link KeyRecognition}: read from the database once (one statement, outside any transaction; the
 * checksum secret is generated and stored by the first process that needs it, so operators configure nothing and
 * every instance, and the admin command, uses the same one), then served from memory. `npm start` reads it before it
 * listens. Call it before opening a transaction that creates a key: it must not be read inside one.
 * @throws the database error when it cannot be read (not kept: the next call tries again).
 */
export function keyRecognition(): Promise<KeyRecognition> {
  const database = db();
  if (state.database !== database || !state.loading) {
    state.database = database;
    const loading = read();
    state.loading = loading;
    loading.catch(() => {
      if (state.loading === loading) state.loading = undefined;
    });
  }
  return state.loading;
}
