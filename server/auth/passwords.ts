import bcrypt from "bcryptjs";
import { ApiError } from "../errors";

/** bcrypt cost factor: 2^12 rounds, about 250–400 ms per hash on one core of the 2-core machine (pure JS). */
export const BCRYPT_COST = 12;

/** Shortest password accepted, in characters. */
export const PASSWORD_MIN_LENGTH = 10;

/** Longest password accepted, in UTF-8 bytes: bcrypt ignores everything after byte 72, so longer ones are refused. */
export const PASSWORD_MAX_BYTES = 72;

/**
 * Checks a new password against the rules: at least {@link PASSWORD_MIN_LENGTH} characters and at most
 * {@link PASSWORD_MAX_BYTES} UTF-8 bytes (DESIGN.md §7).
 * @throws ApiError `validation_error` (422) on `password` naming the rule it breaks.
 */
export function assertPasswordAcceptable(password: string): void {
  const problem =
    password.length < PASSWORD_MIN_LENGTH
      ? `Password must be at least ${PASSWORD_MIN_LENGTH} characters`
      : bcrypt.truncates(password)
        ? `Password must be at most ${PASSWORD_MAX_BYTES} bytes (UTF-8)`
        : null;
  if (problem) throw new ApiError("validation_error", problem, { details: [{ path: ["password"], message: problem }] });
}

/**
 * Hashes a password with bcrypt (`bcryptjs`, cost {@link BCRYPT_COST}, random salt) for `User.passwordHash`.
 * @returns the 60-character modular-crypt string `$2b$12$…`.
 * @throws ApiError `validation_error` (422) when the password breaks {@link assertPasswordAcceptable}.
 */
export async function hashPassword(password: string): Promise<string> {
  assertPasswordAcceptable(password);
  return bcrypt.hash(password, BCRYPT_COST);
}

// Compared against when the email is unknown, so an unknown account costs as long as a wrong password. Made on
// first use: hashing at import would block every process that loads this module for a few hundred ms.
let dummyHash: Promise<string> | undefined;

/**
 * Whether `password` matches `hash` (constant-time comparison inside bcrypt). With `hash` null (unknown user) it
 * still spends one bcrypt computation and returns false, so response time does not reveal which emails exist.
 */
export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  dummyHash ??= bcrypt.hash("timing-equaliser-not-a-password", BCRYPT_COST);
  const matches = await bcrypt.compare(password, hash ?? (await dummyHash));
  return hash !== null && matches;
}
