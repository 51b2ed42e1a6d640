// "SSO required" on the server (docs/api-contract.md §11.3): what a member of an organisation that enforces it may no
// longer do with a password, a code or a passkey, on every better-auth path, whoever calls it (the pages, or
// /api/auth/* directly). Checked where sessions are made (better-auth.ts's session hook, so a path added later is
// covered too) and before the paths that change a password or make an account.
import { APIError } from "better-auth/api";
import { prisma } from "../../db/transaction";
import { domainOf, requiredMembershipsOf, requiringOrganisationOfDomain } from "./policy";

/** The refusal's code: the pages show its message and offer single sign-on. */
export const SSO_REQUIRED = "SSO_REQUIRED";

function refusal(orgName: string): APIError {
  return new APIError("FORBIDDEN", {
    message: `${orgName} requires single sign-on: sign in with your work email through its identity provider`,
    code: SSO_REQUIRED,
  });
}

/**
 * Whether `userId` may get a session made on a path other than single sign-on: refused when every organisation they
 * are a member of enforces `required` (a member of another organisation too signs in, and the required one refuses
 * that session: server/identity/session.ts). A break-glass owner of such an organisation is let in when the session is
 * made by their second factor (`secondFactorProved`), or is about to be asked for it (`secondFactorToFollow`).
 * @throws APIError `FORBIDDEN` (403) `SSO_REQUIRED`.
 */
export async function assertMayStartSession(
  userId: string,
  proof: { secondFactorProved: boolean; secondFactorToFollow: () => Promise<boolean> },
): Promise<{ breakGlassOrgIds: string[] }> {
  const { all, required } = await requiredMembershipsOf(userId);
  if (required.length === 0) return { breakGlassOrgIds: [] };
  const breakGlass = required.filter((membership) => membership.breakGlass);
  if (breakGlass.length > 0 && (proof.secondFactorProved || (await proof.secondFactorToFollow()))) {
    return { breakGlassOrgIds: breakGlass.map((m) => m.orgId) };
  }
  if (required.length < all) return { breakGlassOrgIds: [] };
  throw refusal(required[0]?.orgName ?? "Your organisation");
}

/**
 * Refuses a password reset (asking for the link, or setting the password with it) for a person their organisation
 * makes sign in through its identity provider: a user all of whose organisations enforce `required` (break-glass
 * owners excepted: their password is their way in when the identity provider is down), or, for an email no user has,
 * one of a domain an enforcing organisation verified.
 * @throws APIError `FORBIDDEN` (403) `SSO_REQUIRED`.
 */
export async function assertMayResetPassword(who: { userId?: string | null; email?: string | null }): Promise<void> {
  const user = who.userId
    ? { id: who.userId }
    : who.email
      ? await prisma().user.findUnique({ where: { email: who.email.trim().toLowerCase() }, select: { id: true } })
      : null;
  if (user) {
    const { all, required } = await requiredMembershipsOf(user.id);
    if (required.length > 0 && required.length === all && !required.some((m) => m.breakGlass)) {
      throw refusal(required[0]?.orgName ?? "Your organisation");
    }
    return;
  }
  if (who.email) await assertMaySignUp(who.email);
}

/**
 * Refuses making an account with a password for an address of a domain an organisation that enforces `required`
 * verified: its people join through the identity provider.
 * @throws APIError `FORBIDDEN` (403) `SSO_REQUIRED`.
 */
export async function assertMaySignUp(email: string): Promise<void> {
  const organisation = await requiringOrganisationOfDomain(domainOf(email));
  if (organisation) throw refusal(organisation.name);
}
