import { z } from "zod";
import { memberProcedure, router, signInFactorProcedure } from "../../settings/trpc";
import { confirmIdentity, listSessions, revokeSession, secondFactorNeeded } from "../session";
import {
  confirmTotp,
  disableTotp,
  listPasskeys,
  removePasskey,
  replaceBackupCodes,
  startTotpEnrolment,
  totpPending,
} from "./service";

const PasswordSchema = z.object({ password: z.string().min(1, "Enter your password").max(200) });
const CodeSchema = z.object({ code: z.string().trim().min(1, "Enter the code").max(20) });

/**
 * The member's own sign-in security (docs/architecture.md, "Settings: sign-in, team and roles"), whatever their role:
 * an authenticator app (TOTP), passkeys, the sessions signed in, and confirming it's them before a step-up action.
 * Changing the factors themselves (setting up or turning off the app, new backup codes, removing a passkey) needs a
 * sign-in or confirmation within 15 minutes with the member's strongest factor (a passkey, else the app, else the
 * password): otherwise 403 naming the factor to confirm with. None of them makes the session fresher or two-factor.
 * Every change is in the audit trail.
 */
export const securityRouter = router({
  /** Whether two-factor is on, an enrolment waits for its code, the passkeys and the sessions. */
  overview: memberProcedure.query(async ({ ctx }) => ({
    twoFactorEnabled: ctx.member.user.twoFactorEnabled,
    totpPending: await totpPending(ctx.member),
    passkeys: await listPasskeys(ctx.member),
    sessions: await listSessions(ctx.member),
  })),

  /**
   * Starts enrolling an authenticator app. @returns `{ uri, secret, qrDataUrl, backupCodes }`, shown once.
   * @throws 403 without a step-up with the strongest factor; 422 on a wrong password or an app already enrolled; 429
   * after too many attempts.
   */
  startTotp: signInFactorProcedure
    .input(PasswordSchema)
    .mutation(({ ctx, input }) => startTotpEnrolment(ctx.member, input.password)),

  /**
   * Confirms the enrolment with a code from the app: two-factor is on. The session is not made two-factor by it:
   * `secondFactorNeeded` is what the organisation's requirement now asks of this session (`confirm`: confirm with a
   * code or sign in again; null: nothing). @throws 403 without a step-up with the strongest factor; 422 on a wrong
   * code; 429.
   */
  confirmTotp: signInFactorProcedure.input(CodeSchema).mutation(async ({ ctx, input }) => {
    await confirmTotp(ctx.member, input.code);
    const member = { ...ctx.member, user: { ...ctx.member.user, twoFactorEnabled: true } };
    return { twoFactorEnabled: true as const, secondFactorNeeded: secondFactorNeeded(member) };
  }),

  /**
   * Turns two-factor off. @throws 403 without a step-up with the strongest factor; 422 on a wrong password; 429 after
   * too many attempts.
   */
  disableTotp: signInFactorProcedure.input(PasswordSchema).mutation(async ({ ctx, input }) => {
    await disableTotp(ctx.member, input.password);
    return { twoFactorEnabled: false as const };
  }),

  /**
   * Replaces the backup codes: `{ backupCodes }`, ten new ones shown once; the old ones stop working. @throws 403
   * without a step-up with the strongest factor; 422 on a wrong password or without an app; 429.
   */
  replaceBackupCodes: signInFactorProcedure.input(PasswordSchema).mutation(async ({ ctx, input }) => ({
    backupCodes: await replaceBackupCodes(ctx.member, input.password),
  })),

  /**
   * Removes one of the member's passkeys. @throws 403 without a step-up with the strongest factor; 404 when it is not
   * theirs.
   */
  removePasskey: signInFactorProcedure
    .input(z.object({ id: z.string().min(1).max(64) }))
    .mutation(async ({ ctx, input }) => {
      await removePasskey(ctx.member, input.id);
      return { id: input.id, removed: true as const };
    }),

  /** Ends one of the member's sessions on the server. @throws 404 when it is not theirs. */
  revokeSession: memberProcedure.input(z.object({ id: z.string().min(1).max(64) })).mutation(async ({ ctx, input }) => {
    await revokeSession(ctx.member, input.id);
    return { id: input.id, revoked: true as const };
  }),

  /**
   * Confirms it's the member (step-up): an authenticator code (or, with `backup`, a backup code) when two-factor is
   * on, else the password (refused for a member with a passkey, who confirms with it); step-up actions may then run
   * for 15 minutes, and the session counts as two-factor after a code. @throws 422 when it does not match or was
   * already used; 429 after too many attempts (docs/api-contract.md §5.10).
   */
  confirm: memberProcedure
    .input(
      z.object({
        code: z.string().max(20).optional(),
        password: z.string().max(200).optional(),
        backup: z.boolean().optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      await confirmIdentity(ctx.member, input);
      return { confirmed: true as const };
    }),
});
