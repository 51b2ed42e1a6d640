"use server";

import { createHash } from "node:crypto";
import { redirect } from "next/navigation";
import { kv } from "../../server/kv";
import { createSession } from "../../server/services/sessions";
import { authenticateUser } from "../../server/services/users";
import { safeNextPath, setSessionCookie } from "../(settings)/_lib/session";

/** What the sign-in form shows after an attempt: an error and the email typed. */
export interface SignInState {
  error?: string;
  email?: string;
}

/** Sign-in attempts allowed per email address per 15 minutes (slows password guessing). */
const ATTEMPTS_PER_WINDOW = 10;
const WINDOW_MS = 15 * 60 * 1000;

async function throttled(email: string): Promise<boolean> {
  const key = `signin:{${createHash("sha256").update(email.trim().toLowerCase()).digest("hex")}}`;
  try {
    const result = await kv().slidingWindow([{ key, limit: ATTEMPTS_PER_WINDOW }], WINDOW_MS);
    return !result.allowed;
  } catch {
    // An unreachable store must not lock everyone out; bcrypt's cost still slows guessing.
    return false;
  }
}

/**
 * Signs a settings user in (DESIGN.md §7): checks email and password, starts a 7-day session and sets its cookie,
 * then goes to `next` (a local path, default `/settings`). Wrong email and wrong password give the same message.
 */
export async function signIn(_previous: SignInState, form: FormData): Promise<SignInState> {
  const email = String(form.get("email") ?? "").trim();
  const password = String(form.get("password") ?? "");
  if (!email || !password) return { error: "Enter your email and password", email };
  if (await throttled(email)) {
    return { error: "Too many sign-in attempts for this email: wait 15 minutes and try again", email };
  }
  const user = await authenticateUser(email, password);
  if (!user) return { error: "Email or password is incorrect", email };
  const { token, expiresAt } = await createSession(user.id);
  await setSessionCookie(token, expiresAt);
  redirect(safeNextPath(form.get("next")));
}
