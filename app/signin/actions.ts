"use server";

import { redirect } from "next/navigation";
import { authFor } from "../../server/identity/better-auth";
import { authRefusal, authRefusalCode } from "../../server/identity/better-auth-errors";
import { SSO_REQUIRED } from "../../server/identity/sso/enforcement";
import { settingsErrorMessage } from "../../server/settings/trpc";
import { safeNextPath, settingsRequest } from "../(settings)/_lib/session";

/**
 * What the sign-in form shows after an attempt: the step (password, then a code when two-factor is on, or the passkey
 * when the user has one), an error.
 */
export interface SignInState {
  step: "password" | "code" | "passkey";
  error?: string;
  email?: string;
  /** The refusal was `SSO_REQUIRED`: the page offers single sign-on instead. */
  ssoRequired?: boolean;
}

// An `SSO_REQUIRED` refusal keeps its own words (they name the organisation) and is told apart from a wrong password,
// so the page can point to single sign-on rather than to the password.
function refused(error: unknown, step: SignInState["step"], email: string): SignInState {
  const own = (error as { body?: { message?: unknown } } | null)?.body?.message;
  if (authRefusalCode(error) === SSO_REQUIRED) {
    const message = typeof own === "string" && own ? own : "Your organisation requires single sign-on";
    return { step, error: message, email, ssoRequired: true };
  }
  return { step, error: settingsErrorMessage(authRefusal(error) ?? error), email };
}

/**
 * Signs a settings user in with email and password (better-auth; every attempt counts against the limits of
 * docs/api-contract.md §5.10), then goes to `next` (a local path, default `/settings`). With an authenticator app it
 * asks for a code first; with a passkey (and no app) for the passkey: a password alone does not sign them in. Wrong
 * email and wrong password give the same message; too many attempts say how long to wait. A member whose organisation
 * requires single sign-on is refused with `SSO_REQUIRED` (`ssoRequired`), in the words naming the organisation.
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
    return refused(error, "password", email);
  }
  if ((result as { twoFactorRedirect?: boolean }).twoFactorRedirect) return { step: "code", email };
  if ((result as { passkeyRequired?: boolean }).passkeyRequired) return { step: "passkey", email };
  redirect(safeNextPath(form.get("next")));
}

/**
 * The second step of a sign-in with two-factor on: a code from the authenticator app (each is accepted once), or one
 * of the backup codes (each works once). The password step's challenge lasts 10 minutes.
 */
export async function verifyCode(_previous: SignInState, form: FormData): Promise<SignInState> {
  const code = String(form.get("code") ?? "").replace(/\s+/g, "");
  const email = String(form.get("email") ?? "");
  if (!code) return { step: "code", error: "Enter the code from your authenticator app", email };
  const request = await settingsRequest();
  const api = authFor(request.origin).api;
  try {
    await (form.get("backup") === "on"
      ? api.verifyBackupCode({ headers: request.headers, body: { code } })
      : api.verifyTOTP({ headers: request.headers, body: { code } }));
  } catch (error) {
    return refused(error, "code", email);
  }
  redirect(safeNextPath(form.get("next")));
}
