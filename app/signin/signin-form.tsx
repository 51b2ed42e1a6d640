"use client";

import { type FormEvent, type ReactNode, useActionState, useEffect, useRef, useState } from "react";
import { type SignInState, signIn, verifyCode } from "./actions";

/** What `POST /api/sso/discover` answers (docs/api-contract.md §11.4). */
interface DiscoverAnswer {
  method?: "sso" | "password";
  redirectTo?: string | null;
  error?: { message?: string };
}

/**
 * The sign-in form, email first (docs/api-contract.md §11.4): the email, then Continue asks `/api/sso/discover`
 * whether it signs in through its organisation's identity provider, and either goes there or reveals the password
 * field and `passkey` (the passkey button). Then (with two-factor on) a code from the authenticator app or a backup
 * code, or (with a passkey and no app) the passkey. Without JavaScript the email and password show at once and post to
 * the server action, as before; keeps the email after a refused attempt. A refusal because the organisation requires
 * single sign-on says so and leads back to the email step.
 */
export function SignInForm({ next, passkey }: { next: string; passkey?: ReactNode }) {
  const [state, action, pending] = useActionState<SignInState, FormData>(signIn, { step: "password" });
  const [codeState, codeAction, codePending] = useActionState<SignInState, FormData>(verifyCode, { step: "code" });
  // Until scripts run the whole form shows (and works without them); then the email comes first.
  const [enhanced, setEnhanced] = useState(false);
  // The email the password field was revealed for: changing the email asks again.
  const [revealedFor, setRevealedFor] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const email = useRef<HTMLInputElement>(null);
  const password = useRef<HTMLInputElement>(null);
  useEffect(() => setEnhanced(true), []);
  useEffect(() => {
    if (revealedFor !== null) password.current?.focus();
  }, [revealedFor]);

  const emailStep = enhanced && revealedFor === null;

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    if (!enhanced) return;
    const typed = (email.current?.value ?? "").trim();
    if (revealedFor !== null && revealedFor === typed.toLowerCase()) return;
    event.preventDefault();
    setChecking(true);
    setNotice(null);
    try {
      const response = await fetch("/api/sso/discover", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: typed }),
      });
      const answer = (await response.json()) as DiscoverAnswer;
      if (response.ok && answer.method === "sso" && answer.redirectTo) {
        window.location.assign(answer.redirectTo);
        return;
      }
      if (!response.ok && answer.error?.message) setNotice(answer.error.message);
    } catch {
      // The discovery call failing leaves the password, which works for everyone it does not send elsewhere.
    }
    setChecking(false);
    setRevealedFor(typed.toLowerCase());
  }

  function backToEmail() {
    setRevealedFor(null);
    email.current?.focus();
  }

  if (state.step === "passkey") {
    return (
      <>
        <p role="status" className="alert warning" data-testid="passkey-required">
          <strong>{state.email}</strong> has a passkey: finish signing in with it (“Sign in with a passkey” below). A
          password alone does not sign you in.
        </p>
        {passkey}
      </>
    );
  }
  if (state.step === "code") {
    return (
      <>
        <form action={codeAction} className="stack" aria-describedby={codeState.error ? "code-error" : "code-hint"}>
          <input type="hidden" name="next" value={next} />
          <input type="hidden" name="email" value={state.email ?? ""} />
          <p id="code-hint">
            Two-factor authentication is on for <strong>{state.email}</strong>: enter the 6-digit code your
            authenticator app shows.
          </p>
          <div className="field">
            <label htmlFor="code">Authentication code</label>
            <input
              id="code"
              name="code"
              type="text"
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              maxLength={20}
              aria-invalid={codeState.error ? true : undefined}
            />
          </div>
          <label className="choice">
            <input type="checkbox" name="backup" />
            <span className="choice-text">It is a backup code (each works once)</span>
          </label>
          <div aria-live="polite">
            {codeState.error ? (
              <p id="code-error" role="alert" className="alert error">
                {codeState.error}
              </p>
            ) : null}
          </div>
          <div>
            <button type="submit" disabled={codePending}>
              {codePending ? "Checking…" : "Verify and sign in"}
            </button>
          </div>
        </form>
        {passkey}
      </>
    );
  }
  return (
    <>
      <form
        action={action}
        onSubmit={onSubmit}
        className="stack"
        aria-describedby={state.error ? "signin-error" : undefined}
      >
        <input type="hidden" name="next" value={next} />
        <div className="field">
          <label htmlFor="email">Email</label>
          <input
            ref={email}
            id="email"
            name="email"
            type="email"
            autoComplete="username webauthn"
            required
            defaultValue={state.email ?? ""}
            aria-invalid={state.error && !state.ssoRequired ? true : undefined}
          />
        </div>
        {emailStep ? null : (
          <div className="field">
            <label htmlFor="password">Password</label>
            <input
              ref={password}
              id="password"
              name="password"
              type="password"
              autoComplete="current-password"
              required
              aria-invalid={state.error && !state.ssoRequired ? true : undefined}
            />
          </div>
        )}
        <div aria-live="polite">
          {notice ? <p className="alert warning">{notice}</p> : null}
          {state.error ? (
            <p
              id="signin-error"
              role="alert"
              className="alert error"
              data-testid={state.ssoRequired ? "sso-required" : undefined}
            >
              {state.error}
            </p>
          ) : null}
          {state.ssoRequired ? (
            <p className="hint" data-testid="sso-hint">
              Sign in with SSO: enter your work email (the address your organisation's identity provider knows) and
              press Continue; you are sent to the identity provider.{" "}
              {enhanced ? (
                <button type="button" className="secondary" onClick={backToEmail}>
                  Sign in with SSO
                </button>
              ) : null}
            </p>
          ) : null}
        </div>
        <div>
          {emailStep ? (
            <button type="submit" disabled={checking}>
              {checking ? "Checking…" : "Continue"}
            </button>
          ) : (
            <button type="submit" disabled={pending || checking}>
              {pending ? "Signing in…" : checking ? "Checking…" : "Sign in"}
            </button>
          )}
        </div>
      </form>
      {emailStep ? null : passkey}
    </>
  );
}
