// A user's own sign-in security (docs/architecture.md, "Settings: sign-in, team and roles"): an authenticator app
// (TOTP, confirmed with a code, ten backup codes shown once, replaceable) and passkeys, through better-auth's twoFactor
// and passkey plugins. The procedures run these only after a step-up with the member's strongest factor
// (`signInFactorProcedure`). None of them makes a session count as signed in more recently or as two-factor: better-auth
// rotates the session's token when the app is turned on or off, and the rotated session keeps what the old one proved
// (server/identity/better-auth.ts). Every change is written to the audit trail of the user's organisations.
import QRCode from "qrcode";
import { prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { recordSettingsAuditForUser } from "../audit-trail/service";
import { authFor } from "../better-auth";
import { viaAuth } from "../better-auth-errors";
import type { SignedInMember } from "../session";

/** An authenticator enrolment waiting for its first code: shown once, never stored in the clear. */
export interface TotpEnrolment {
  /** `otpauth://totp/…` for authenticator apps. */
  uri: string;
  /** The secret as text (base32), for apps that cannot scan. */
  secret: string;
  /** The same URI as a QR code, a `data:image/png;base64,…` URL for an `<img>`. */
  qrDataUrl: string;
  /** Ten single-use backup codes. */
  backupCodes: string[];
}

function audit(
  member: SignedInMember,
  action: "twoFactor.enabled" | "twoFactor.disabled" | "twoFactor.backupCodesReplaced" | "passkey.removed",
  target?: string,
) {
  return recordSettingsAuditForUser(member.user.id, {
    actorEmail: member.user.email,
    action,
    target,
    ip: member.request.ip,
    userAgent: member.request.userAgent,
  });
}

/**
 * Once a user has no factor of a kind left, no session of theirs counts as having proved it (`Session.secondFactor`):
 * a session is two-factor only through a factor the user still has, so removing a factor and adding another never
 * makes a session two-factor that did not prove the new one.
 */
async function forgetProofs(userId: string, proofs: string[]): Promise<void> {
  await prisma().session.updateMany({ where: { userId, secondFactor: { in: proofs } }, data: { secondFactor: null } });
}

/**
 * Starts enrolling an authenticator app (password required, counted against the attempt limit): a new secret and
 * backup codes. Two-factor is on only once {@link confirmTotp} gets a code from the app.
 * @throws ApiError `validation_error` (422) on `password` when wrong, or when an app is already enrolled;
 *         `rate_limited` (429) after too many attempts.
 */
export async function startTotpEnrolment(member: SignedInMember, password: string): Promise<TotpEnrolment> {
  const result = await viaAuth(() =>
    authFor(member.request.origin).api.enableTwoFactor({ headers: member.request.headers, body: { password } }),
  );
  const uri = (result as { totpURI?: string }).totpURI ?? "";
  const secret = new URL(uri).searchParams.get("secret") ?? "";
  const qrDataUrl = await QRCode.toDataURL(uri, { margin: 1, width: 200 });
  return { uri, secret, qrDataUrl, backupCodes: (result as { backupCodes?: string[] }).backupCodes ?? [] };
}

/**
 * Confirms an enrolment with a code from the app: two-factor is on from now (sign-in asks for a code). The session
 * stays what it was: signed in when it was, as two-factor as it was (a sign-in with a code, or a confirmation with one,
 * makes it two-factor). better-auth gives it a new token, whose cookie is set on the response.
 * @throws ApiError `validation_error` (422) on `code` when it does not match or was already used; `rate_limited`
 *         (429) after too many attempts.
 */
export async function confirmTotp(member: SignedInMember, code: string): Promise<void> {
  await viaAuth(() =>
    authFor(member.request.origin).api.verifyTOTP({ headers: member.request.headers, body: { code: code.trim() } }),
  );
  await audit(member, "twoFactor.enabled", "authenticator app");
}

/**
 * Turns two-factor off and forgets the app (password required, counted against the attempt limit); sessions that
 * proved a code or a backup code no longer count as two-factor.
 * @throws ApiError `validation_error` (422) on `password` when wrong; `rate_limited` (429) after too many attempts.
 */
export async function disableTotp(member: SignedInMember, password: string): Promise<void> {
  // Outside the transaction: a wrong password's audit entry, written by our plugin, must outlive the refusal.
  await viaAuth(() =>
    authFor(member.request.origin).api.disableTwoFactor({ headers: member.request.headers, body: { password } }),
  );
  await transaction(async () => {
    await forgetProofs(member.user.id, ["authenticator app", "backup code"]);
    await audit(member, "twoFactor.disabled", "authenticator app");
  });
}

/**
 * Replaces the ten backup codes with ten new ones (password required, counted against the attempt limit): the old
 * ones stop working. The new codes are returned once.
 * @throws ApiError `validation_error` (422) on `password` when wrong, or when no authenticator app is set up;
 *         `rate_limited` (429) after too many attempts.
 */
export async function replaceBackupCodes(member: SignedInMember, password: string): Promise<string[]> {
  const result = await viaAuth(() =>
    authFor(member.request.origin).api.generateBackupCodes({ headers: member.request.headers, body: { password } }),
  );
  await audit(member, "twoFactor.backupCodesReplaced", "backup codes");
  return result.backupCodes;
}

/** Whether the user has an authenticator enrolled but not yet confirmed (the page offers the code form again). */
export async function totpPending(member: SignedInMember): Promise<boolean> {
  if (member.user.twoFactorEnabled) return false;
  return (await prisma().twoFactor.count({ where: { userId: member.user.id, verified: false } })) > 0;
}

/** A registered passkey as the security page lists it. */
export interface PasskeyView {
  id: string;
  name: string;
  createdAt: Date | null;
  /** `singleDevice` or `multiDevice` (synced). */
  deviceType: string;
}

/** The user's passkeys, newest first. */
export async function listPasskeys(member: SignedInMember): Promise<PasskeyView[]> {
  const rows = await prisma().passkey.findMany({
    where: { userId: member.user.id },
    select: { id: true, name: true, createdAt: true, deviceType: true },
    orderBy: { createdAt: "desc" },
  });
  return rows.map((row) => ({ ...row, name: row.name || "Passkey" }));
}

/**
 * Removes one of the user's passkeys; once none is left, sessions that proved a passkey no longer count as two-factor.
 * @throws ApiError `not_found` (404) when it is not theirs.
 */
export async function removePasskey(member: SignedInMember, passkeyId: string): Promise<void> {
  const found = await prisma().passkey.findFirst({
    where: { id: passkeyId, userId: member.user.id },
    select: { name: true },
  });
  if (!found) throw new ApiError("not_found", "Passkey not found");
  await transaction(async () => {
    await viaAuth(() =>
      authFor(member.request.origin).api.deletePasskey({ headers: member.request.headers, body: { id: passkeyId } }),
    );
    if ((await prisma().passkey.count({ where: { userId: member.user.id } })) === 0) {
      await forgetProofs(member.user.id, ["passkey"]);
    }
    await audit(member, "passkey.removed", `passkey ${found.name ?? ""}`.trim());
  });
}
