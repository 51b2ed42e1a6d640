"use server";

import { revalidatePath } from "next/cache";
import type { FormState } from "../../_lib/form-state";
import { field, runAction } from "../../_lib/run-action";
import { settingsCaller } from "../../_lib/session";

/** What the authenticator set-up shows after its password step: the QR code, the secret and the backup codes. */
export interface TotpState extends FormState {
  enrolment?: { qrDataUrl: string; secret: string; uri: string; backupCodes: string[] };
}

/** Starts enrolling an authenticator app (password): returns the QR code, secret and backup codes, shown once. */
export async function startTotpAction(_previous: TotpState, form: FormData): Promise<TotpState> {
  let enrolment: TotpState["enrolment"];
  const state = await runAction(async () => {
    enrolment = await (await settingsCaller()).security.startTotp({ password: field(form, "password") });
    return {
      status: "ok",
      message: "Scan the QR code (or type the secret) in your authenticator app, then enter a code.",
    };
  });
  return { ...state, enrolment };
}

/**
 * Confirms the enrolment with a code from the app: two-factor is on. The page then says what the session still is
 * (setting the app up does not make it two-factor) and what to do where the organisation requires a two-factor session.
 */
export async function confirmTotpAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    await (await settingsCaller()).security.confirmTotp({ code: field(form, "code") });
    revalidatePath("/settings/security");
    return { status: "ok", message: "Two-factor is on: your next sign-in asks for a code from your app." };
  });
}

/** Replaces the backup codes (password): the ten new ones are shown once, the old ones stop working. */
export async function replaceBackupCodesAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    const { backupCodes } = await (await settingsCaller()).security.replaceBackupCodes({
      password: field(form, "password"),
    });
    return {
      status: "ok",
      message: "New backup codes: the old ones no longer work.",
      reveal: {
        label: "Your backup codes",
        value: backupCodes.join(" "),
        note: "Each signs you in once if you lose your app. They are shown only this once: store them somewhere safe.",
      },
    };
  });
}

/** Turns two-factor off (password). */
export async function disableTotpAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    await (await settingsCaller()).security.disableTotp({ password: field(form, "password") });
    revalidatePath("/settings/security");
    return { status: "ok", message: "Two-factor is off." };
  });
}

/** Removes the passkey `id`. */
export async function removePasskeyAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    await (await settingsCaller()).security.removePasskey({ id: field(form, "id") });
    revalidatePath("/settings/security");
    return { status: "ok", message: "Passkey removed." };
  });
}

/** Ends the session `id` on the server. */
export async function revokeSessionAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    await (await settingsCaller()).security.revokeSession({ id: field(form, "id") });
    revalidatePath("/settings/security");
    return { status: "ok", message: "Session ended: that browser is signed out." };
  });
}
