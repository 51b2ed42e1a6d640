// Password reset (docs/api-contract.md §5.10): the operator command's one-time link (also mailed when mail is
// configured) and the public page that sets a new password with it, ending every session of the user.

import { prisma } from "../db/transaction";
import { ApiError } from "../errors";
import { sendMail } from "../platform/mail";
import { recordSettingsAuditForUser } from "./audit-trail/service";
import { authFor, capturePasswordResetToken, PASSWORD_RESET_TTL_SECONDS } from "./better-auth";
import { viaAuth } from "./better-auth-errors";
import { assertPasswordAcceptable, normaliseEmail } from "./passwords";
import type { SettingsRequest } from "./session";

/**
 * A one-time password-reset link for `email` (`<origin>/reset-password?token=…`, valid 1 hour): printed by the
 * operator command, also mailed when mail is configured.
 * @throws ApiError `not_found` (404) when no user has the email.
 */
export async function passwordResetLink(origin: string, email: string): Promise<{ link: string; expiresAt: Date }> {
  const normalised = normaliseEmail(email);
  if ((await prisma().user.count({ where: { email: normalised } })) === 0) {
    throw new ApiError("not_found", `No user has the email ${normalised}`);
  }
  const auth = authFor(origin);
  const token = await capturePasswordResetToken(() =>
    viaAuth(() => auth.api.requestPasswordReset({ body: { email: normalised } })),
  );
  if (!token) throw new Error("better-auth issued no reset token");
  const link = `${origin}/reset-password?token=${encodeURIComponent(token)}`;
  const expiresAt = new Date(Date.now() + PASSWORD_RESET_TTL_SECONDS * 1000);
  await sendMail({
    to: normalised,
    subject: "Reset your MSP CRM password",
    text: `Set a new password: ${link}\n\nThe link works once, until ${expiresAt.toUTCString()}.`,
  });
  return { link, expiresAt };
}

/**
 * Sets a new password with a reset link's token (every session of the user ends), and records it.
 * @throws ApiError `validation_error` (422) for a password breaking the rules or a token that is unknown, used or
 *         expired.
 */
export async function resetPassword(request: SettingsRequest, token: string, password: string): Promise<void> {
  assertPasswordAcceptable(password);
  const verification = await prisma().verification.findFirst({
    where: { identifier: `reset-password:${token}`, expiresAt: { gt: new Date() } },
    select: { value: true },
  });
  const auth = authFor(request.origin);
  await viaAuth(() => auth.api.resetPassword({ headers: request.headers, body: { newPassword: password, token } }));
  const user = verification
    ? await prisma().user.findUnique({ where: { id: verification.value }, select: { id: true, email: true } })
    : null;
  if (user) {
    await recordSettingsAuditForUser(user.id, {
      actorEmail: user.email,
      action: "password.reset",
      ip: request.ip,
      userAgent: request.userAgent,
    });
  }
}
