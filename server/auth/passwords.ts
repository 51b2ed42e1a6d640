// Password hashes of settings users (docs/architecture.md, "Settings: sign-in, team and roles"): better-auth's scrypt
// for every new hash; bcrypt hashes from before better-auth still verify, and the sign-in that verifies one replaces
// it with scrypt.
import bcrypt from "bcryptjs";
import { hashPassword as scryptHash, verifyPassword as scryptVerify } from "better-auth/crypto";

/** Shortest password accepted, in characters. */
export const PASSWORD_MIN_LENGTH = 10;

/** Longest password accepted, in characters (scrypt has no 72-byte limit as bcrypt had). */
export const PASSWORD_MAX_LENGTH = 128;

const BCRYPT_HASH = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;

/** Whether `hash` is a bcrypt hash (`$2b$12$…`) written before better-auth, which sign-in replaces. */
export function isLegacyPasswordHash(hash: string): boolean {
  return BCRYPT_HASH.test(hash);
}

/**
 * Hashes a password with better-auth's scrypt (`salt:key`, hex).
 * @returns the string stored in `AuthAccount.password`.
 */
export function hashPassword(password: string): Promise<string> {
  return scryptHash(password);
}

/**
 * Whether `password` matches `hash`: scrypt hashes through better-auth, bcrypt hashes (legacy) through bcryptjs. Both
 * compare in constant time.
 */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  if (isLegacyPasswordHash(hash)) return bcrypt.compare(password, hash);
  return scryptVerify({ hash, password });
}
