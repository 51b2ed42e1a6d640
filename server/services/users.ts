import { hashPassword, verifyPassword } from "../auth/passwords";
import { prisma } from "../db/transaction";
import { ApiError } from "../errors";
import { findUnstorableText } from "../schemas/storable";

/** A settings user as shown to operators and the UI: never the password hash. */
export interface UserView {
  id: string;
  orgId: string;
  email: string;
  name: string | null;
  createdAt: Date;
}

const userSelect = { id: true, orgId: true, email: true, name: true, createdAt: true } as const;

// Deliberately loose (one @, no spaces, a dot in the domain): the address is a login name, never mailed to.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Normalises an email address for storage and lookup: trimmed and lower-cased, so sign-in is case-insensitive.
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

/**
 * Creates a settings user in an organisation (DESIGN.md §7); each user belongs to exactly one organisation and sees
 * only it. The password is hashed with bcrypt (see `server/auth/passwords.ts`).
 * @returns the new {@link UserView}.
 * @throws ApiError `validation_error` (422): malformed email, password breaking the rules, or an email already used
 *         by any user (emails are unique across organisations, as sign-in needs no organisation name).
 */
export async function createUser(
  orgId: string,
  input: { email: string; password: string; name?: string | null },
): Promise<UserView> {
  const email = normaliseEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  const existing = await prisma().user.findUnique({ where: { email }, select: { id: true } });
  if (existing) throw emailTaken();
  try {
    return await prisma().user.create({
      data: { orgId, email, name: input.name?.trim() || null, passwordHash },
      select: userSelect,
    });
  } catch (error) {
    // Two concurrent creations of one email: the unique index decides.
    if ((error as { code?: string }).code === "P2002") throw emailTaken();
    throw error;
  }
}

function emailTaken(): ApiError {
  return new ApiError("validation_error", "A user with this email already exists", {
    details: [{ path: ["email"], message: "A user with this email already exists" }],
  });
}

/**
 * Sets a user's password (operator command, demo start-up).
 * @throws ApiError `not_found` (404) when the user is not in the organisation; `validation_error` (422) for a
 *         password breaking the rules.
 */
export async function setUserPassword(orgId: string, userId: string, password: string): Promise<void> {
  const passwordHash = await hashPassword(password);
  const { count } = await prisma().user.updateMany({ where: { id: userId, orgId }, data: { passwordHash } });
  if (count === 0) throw new ApiError("not_found", `User ${userId} not found`);
}

/**
 * Checks an email and password for sign-in. Unknown email and wrong password take the same time and give the same
 * answer (null), so the form does not reveal which addresses have accounts.
 * @returns the user, or null when the credentials do not match.
 */
export async function authenticateUser(email: string, password: string): Promise<UserView | null> {
  // An address no user can have (NUL, a lone surrogate) is never looked up: PostgreSQL would refuse the query.
  const user = findUnstorableText(email)
    ? null
    : await prisma().user.findUnique({
        where: { email: email.trim().toLowerCase() },
        select: { ...userSelect, passwordHash: true },
      });
  const ok = await verifyPassword(password, user?.passwordHash ?? null);
  if (!ok || !user) return null;
  const { passwordHash: _hash, ...view } = user;
  return view;
}
