"use server";

import { redirect } from "next/navigation";
import { authFor, isAuthError } from "../../server/services/auth";
import { safeNextPath, settingsRequest } from "../(settings)/_lib/session";

/** What the sign-in form shows after an attempt: the step (password, then a code when two-factor is on), an error. */
export interface SignInState {
  step: "password" | "code";
  error?: string;
  email?: string;
}

function refusal(error: unknown, fallback: string): string {
  if (!isAuthError(error)) throw error;
  if (error.statusCode === 429) return "Too many sign-in attempts: wait 15 minutes and try again";
  return fallback;
}

/**
 * Signs a settings user in with email and password (better-auth; limited per email and per address), then goes to
 * `next` (a local path, default `/settings`); with two-factor on, asks for a code first. Wrong email and wrong
 * password give the same message.
 */
export async function signIn(_previous: SignInState, form: FormData): Promise<SignInState> {
  const email = String(form.get("email") ?? "").trim();
  const password = String(form.get("password") ?? "");
  if (!email || !password) return { step: "password", error: "Enter your email and password", email };
  const request = await settingsRequest();
  let result: unknown;
  try {
    result = await authFor(request.origin).api.signInEmail({
      headers: request.headers,
      body: { email, password, rememberMe: true },
    });
  } catch (error) {
    return { step: "password", error: refusal(error, "Email or password is incorrect"), email };
  }
  if ((result as { twoFactorRedirect?: boolean }).twoFactorRedirect) return { step: "code", email };
  redirect(safeNextPath(form.get("next")));
}

/**
 * The second step of a sign-in with two-factor on: a code from the authenticator app, or one of the backup codes
 * (each works once). The password step's challenge lasts 10 minutes.
 */
export async function verifyCode(_previous: SignInState, form: FormData): Promise<SignInState> {
  const code = String(form.get("code") ?? "").replace(/\s+/g, "");
  const email = String(form.get("email") ?? "");
  if (!code) return { step: "code", error: "Enter the code from your authenticator app", email };
  const request = await settingsRequest();
  const api = authFor(request.origin).api;
  try {
    if (form.get("backup") === "on") await api.verifyBackupCode({ headers: request.headers, body: { code } });
    else await api.verifyTOTP({ headers: request.headers, body: { code } });
  } catch (error) {
    const message = refusal(error, "The code is not right: enter the current one, or sign in again");
    return { step: "code", error: message, email };
  }
  redirect(safeNextPath(form.get("next")));
}
