import { z } from "zod";
import {
  confirmTotp,
  disableTotp,
  listPasskeys,
  removePasskey,
  startTotpEnrolment,
  totpPending,
} from "../../services/security";
import { confirmIdentity, listSessions, revokeSession } from "../../services/settings-session";
import { memberProcedure, router } from "./trpc";

const PasswordSchema = z.object({ password: z.string().min(1, "Enter your password").max(200) });
const CodeSchema = z.object({ code: z.string().trim().min(1, "Enter the code").max(20) });

/**
 * The member's own sign-in security (docs/architecture.md, "Settings: sign-in, team and roles"), whatever their role:
 * an authenticator app (TOTP), passkeys, the sessions signed in, and confirming it's them before a step-up action.
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
   * @throws 422 on a wrong password or an app already enrolled; 429 after too many attempts.
   */
  startTotp: memberProcedure
    .input(PasswordSchema)
    .mutation(({ ctx, input }) => startTotpEnrolment(ctx.member, input.password)),

  /** Confirms the enrolment with a code from the app: two-factor is on. @throws 422 on a wrong code; 429. */
  confirmTotp: memberProcedure.input(CodeSchema).mutation(async ({ ctx, input }) => {
    await confirmTotp(ctx.member, input.code);
    return { twoFactorEnabled: true as const };
  }),

  /** Turns two-factor off. @throws 422 on a wrong password; 429 after too many attempts. */
  disableTotp: memberProcedure.input(PasswordSchema).mutation(async ({ ctx, input }) => {
    await disableTotp(ctx.member, input.password);
    return { twoFactorEnabled: false as const };
  }),

  /** Removes one of the member's passkeys. @throws 404 when it is not theirs. */
  removePasskey: memberProcedure.input(z.object({ id: z.string().min(1).max(64) })).mutation(async ({ ctx, input }) => {
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
