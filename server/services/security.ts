// A user's own sign-in security (docs/architecture.md, "Settings: sign-in, team and roles"): an authenticator app
// (TOTP, confirmed with a code, ten backup codes shown once) and passkeys, through better-auth's twoFactor and passkey
// plugins. Every change is written to the audit trail of the user's organisations.
import QRCode from "qrcode";
import { prisma } from "../db/transaction";
import { ApiError } from "../errors";
import { authFor } from "./auth";
import { viaAuth } from "./auth-errors";
import { recordSettingsAuditForUser } from "./settings-audit";
import type { SignedInMember } from "./settings-session";

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
  action: "twoFactor.enabled" | "twoFactor.disabled" | "passkey.removed",
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
 * is replaced by a new one, which counts as two-factor (its cookie is set on the response).
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
 * Turns two-factor off and forgets the app (password required, counted against the attempt limit).
 * @throws ApiError `validation_error` (422) on `password` when wrong; `rate_limited` (429) after too many attempts.
 */
export async function disableTotp(member: SignedInMember, password: string): Promise<void> {
  await viaAuth(() =>
    authFor(member.request.origin).api.disableTwoFactor({ headers: member.request.headers, body: { password } }),
  );
  await audit(member, "twoFactor.disabled", "authenticator app");
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
 * Removes one of the user's passkeys.
 * @throws ApiError `not_found` (404) when it is not theirs.
 */
export async function removePasskey(member: SignedInMember, passkeyId: string): Promise<void> {
  const found = await prisma().passkey.findFirst({
    where: { id: passkeyId, userId: member.user.id },
    select: { name: true },
  });
  if (!found) throw new ApiError("not_found", "Passkey not found");
  await viaAuth(() =>
    authFor(member.request.origin).api.deletePasskey({ headers: member.request.headers, body: { id: passkeyId } }),
  );
  await audit(member, "passkey.removed", `passkey ${found.name ?? ""}`.trim());
}
