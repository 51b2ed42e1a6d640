// The public invitation page (docs/api-contract.md §5.10): what an invitation link shows, and accepting it with a
// new account or as the signed-in user. Accepting is refused once the inviter can no longer give the role
// (better-auth's `beforeAcceptInvitation`, server/identity/better-auth.ts).
import { parseSetCookieHeader } from "better-auth/cookies";
import { prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { recordSettingsAudit, type SettingsActor } from "../audit-trail/service";
import { type Auth, authFor } from "../better-auth";
import { viaAuth } from "../better-auth-errors";
import { assertPasswordAcceptable } from "../passwords";
import type { SettingsRequest } from "../session";

/** What the invitation page shows about an invitation, without signing anyone in. */
export interface InvitationPage {
  id: string;
  email: string;
  role: string;
  orgName: string;
  invitedBy: { name: string; email: string };
  expiresAt: Date;
  /** `pending` (can be accepted), or why it cannot: `expired`, `accepted`, `canceled`, `rejected`. */
  status: "pending" | "expired" | "accepted" | "canceled" | "rejected";
  /** Whether a user with the invited email exists: they sign in to accept; otherwise they set a name and password. */
  hasAccount: boolean;
}

/** The invitation behind a link, or null when the id names none. */
export async function getInvitationPage(invitationId: string): Promise<InvitationPage | null> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(invitationId)) return null;
  const row = await prisma().invitation.findUnique({
    where: { id: invitationId },
    select: {
      id: true,
      email: true,
      role: true,
      status: true,
      expiresAt: true,
      org: { select: { name: true } },
      inviter: { select: { name: true, email: true } },
    },
  });
  if (!row) return null;
  const hasAccount = (await prisma().user.count({ where: { email: row.email } })) > 0;
  const status =
    row.status === "pending" && row.expiresAt.getTime() <= Date.now()
      ? "expired"
      : (row.status as InvitationPage["status"]);
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    orgName: row.org.name,
    invitedBy: row.inviter,
    expiresAt: row.expiresAt,
    status,
    hasAccount,
  };
}

/** The `Cookie` header carrying the cookies a better-auth answer set (a sign-up's new session). */
function cookiesFrom(setCookies: string[]): string {
  return setCookies
    .flatMap((header) => [...parseSetCookieHeader(header).entries()])
    .map(([name, cookie]) => `${name}=${cookie.value}`)
    .join("; ");
}

async function accept(auth: Auth, headers: Headers, invitationId: string, actor: SettingsActor) {
  return transaction(async () => {
    const { invitation } = await viaAuth(() => auth.api.acceptInvitation({ headers, body: { invitationId } }));
    // Invited again by hand: an earlier removal no longer keeps them out of single sign-on (docs/api-contract.md §11.4).
    await prisma().memberRemoval.deleteMany({ where: { orgId: invitation.organizationId, email: invitation.email } });
    await recordSettingsAudit(invitation.organizationId, actor, {
      action: "invitation.accepted",
      target: invitation.email,
      details: { role: invitation.role },
    });
    return invitation;
  });
}

/**
 * Accepts an invitation for someone without an account: creates the user with the invited email, the name and
 * password given, signs them in (the request's response gets the session cookie) and makes them a member, in one
 * transaction: when the acceptance is refused (the invitation withdrawn meanwhile, its inviter no longer allowed to
 * give the role) no user, password or session is left behind.
 * @throws ApiError `not_found` (404) for an invitation that is not pending; `validation_error` (422) for a name or
 *         password breaking the rules, or when the email already has an account (sign in instead).
 */
export async function acceptInvitationWithNewAccount(
  request: SettingsRequest,
  invitationId: string,
  input: { name: string; password: string },
): Promise<{ orgId: string }> {
  const page = await getInvitationPage(invitationId);
  if (page?.status !== "pending") {
    throw new ApiError("not_found", "This invitation was revoked, accepted or has expired");
  }
  if (page.hasAccount) {
    throw new ApiError("validation_error", "This email already has an account: sign in to accept the invitation");
  }
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100) {
    const message = "Name must be 1 to 100 characters";
    throw new ApiError("validation_error", message, { details: [{ path: ["name"], message }] });
  }
  assertPasswordAcceptable(input.password);
  const auth = authFor(request.origin);
  return transaction(async () => {
    const signedUp = await viaAuth(() =>
      auth.api.signUpEmail({
        headers: request.headers,
        body: { email: page.email, name, password: input.password },
        returnHeaders: true,
      }),
    );
    // The link reached its address's owner, as a verification link would.
    await prisma().user.update({ where: { email: page.email }, data: { emailVerified: true } });
    const headers = new Headers(request.headers);
    headers.set("cookie", cookiesFrom(signedUp.headers.getSetCookie()));
    const user = signedUp.response.user;
    const invitation = await accept(auth, headers, invitationId, {
      userId: user.id,
      email: user.email,
      ip: request.ip,
      userAgent: request.userAgent,
    });
    return { orgId: invitation.organizationId };
  });
}

/**
 * Accepts an invitation as the signed-in user (whose email must be the invited one) and makes its organisation the
 * one the session acts on.
 * @throws ApiError `not_found` (404) for an invitation that is not pending; `validation_error` (422) when it is
 *         addressed to another email.
 */
export async function acceptInvitationSignedIn(
  request: SettingsRequest,
  invitationId: string,
): Promise<{ orgId: string }> {
  const auth = authFor(request.origin);
  const found = await auth.api.getSession({ headers: request.headers });
  if (!found) throw new ApiError("unauthorized", "Sign in to accept the invitation");
  const invitation = await accept(auth, request.headers, invitationId, {
    userId: found.user.id,
    email: found.user.email,
    ip: request.ip,
    userAgent: request.userAgent,
  });
  return { orgId: invitation.organizationId };
}
