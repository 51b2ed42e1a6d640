// Credentials of settings users (docs/architecture.md, "Settings: sign-in, team and roles"): better-auth's scrypt
// for every new hash; bcrypt hashes from before better-auth still verify, and the sign-in that verifies one replaces
// it with scrypt; the rules for a new password and how an email is stored.
import bcrypt from "bcryptjs";
import { hashPassword as scryptHash, verifyPassword as scryptVerify } from "better-auth/crypto";
import { ApiError } from "../errors";

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

/**
 * Checks a new password: {@link PASSWORD_MIN_LENGTH} to {@link PASSWORD_MAX_LENGTH} characters
 * (docs/api-contract.md §5.10).
 * @throws ApiError `validation_error` (422) on `password` naming the rule it breaks.
 */
export function assertPasswordAcceptable(password: string): void {
  const problem =
    password.length < PASSWORD_MIN_LENGTH
      ? `Password must be at least ${PASSWORD_MIN_LENGTH} characters`
      : password.length > PASSWORD_MAX_LENGTH
        ? `Password must be at most ${PASSWORD_MAX_LENGTH} characters`
        : null;
  if (problem) throw new ApiError("validation_error", problem, { details: [{ path: ["password"], message: problem }] });
}

// Deliberately loose (one @, no spaces, a dot in the domain), as the address is checked by the mail it receives.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Normalises a settings user's email address for storage and lookup: trimmed and lower-cased, so sign-in is
 * case-insensitive (docs/architecture.md, "Settings: sign-in, team and roles").
 * @throws ApiError `validation_error` (422) on `email` when it is not an address or longer than 254 characters.
 */
export function normaliseEmail(email: string): string {
  const normalised = email.trim().toLowerCase();
  if (normalised.length > 254 || !EMAIL_PATTERN.test(normalised)) {
    throw new ApiError("validation_error", "Email must be an email address", {
      details: [{ path: ["email"], message: "Email must be an email address" }],
    });
  }
  return normalised;
}
