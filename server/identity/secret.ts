// The secret better-auth signs session cookies and encrypts two-factor secrets with (docs/architecture.md,
// "Settings: sign-in, team and roles"). Production sets BETTER_AUTH_SECRET; the embedded first start makes one and
// keeps it.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { env } from "../env";

/** File under `DATA_DIR` holding the generated secret when `BETTER_AUTH_SECRET` is unset (mode 0600). */
export const SECRET_FILE = "auth-secret";

let cached: string | undefined;

/**
 * The signing secret: `BETTER_AUTH_SECRET` when set (at least 32 characters, checked by server/env.ts). Otherwise,
 * on the embedded database or outside production, a random 256-bit secret generated once and kept in
 * `DATA_DIR/auth-secret`, so every process on that directory (server, admin command) signs alike.
 * @throws Error naming `BETTER_AUTH_SECRET` when a production server on `DATABASE_URL` has none: its instances would
 *         otherwise each invent their own and refuse one another's cookies.
 */
export function authSecret(): string {
  if (cached) return cached;
  const config = env();
  if (config.BETTER_AUTH_SECRET) {
    cached = config.BETTER_AUTH_SECRET;
    return cached;
  }
  if (config.DATABASE_URL && config.NODE_ENV === "production") {
    throw new Error(
      "BETTER_AUTH_SECRET is required in production with DATABASE_URL: set it to at least 32 random characters (e.g. `openssl rand -base64 32`), the same on every instance.",
    );
  }
  const file = path.resolve(config.DATA_DIR, SECRET_FILE);
  mkdirSync(path.dirname(file), { recursive: true });
  try {
    // `wx`: two processes starting together keep the first one's secret.
    writeFileSync(file, randomBytes(32).toString("base64url"), { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  cached = readFileSync(file, "utf8").trim();
  return cached;
}
