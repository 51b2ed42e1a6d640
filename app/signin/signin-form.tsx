"use client";

import { useActionState } from "react";
import { type SignInState, signIn, verifyCode } from "./actions";

/**
 * The sign-in form: email and password, then (with two-factor on) a code from the authenticator app or a backup
 * code, or (with a passkey and no app) the passkey. Works without JavaScript (server actions; passkeys need it);
 * keeps the email after a refused attempt.
 */
export function SignInForm({ next }: { next: string }) {
  const [state, action, pending] = useActionState<SignInState, FormData>(signIn, { step: "password" });
  const [codeState, codeAction, codePending] = useActionState<SignInState, FormData>(verifyCode, { step: "code" });
  if (state.step === "passkey") {
    return (
      <p role="status" className="alert warning" data-testid="passkey-required">
        <strong>{state.email}</strong> has a passkey: finish signing in with it (“Sign in with a passkey” below). A
        password alone does not sign you in.
      </p>
    );
  }
  if (state.step === "code") {
    return (
      <form action={codeAction} className="stack" aria-describedby={codeState.error ? "code-error" : "code-hint"}>
        <input type="hidden" name="next" value={next} />
        <input type="hidden" name="email" value={state.email ?? ""} />
        <p id="code-hint">
          Two-factor authentication is on for <strong>{state.email}</strong>: enter the 6-digit code your authenticator
          app shows.
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
    );
  }
  return (
    <form action={action} className="stack" aria-describedby={state.error ? "signin-error" : undefined}>
      <input type="hidden" name="next" value={next} />
      <div className="field">
        <label htmlFor="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autoComplete="username webauthn"
          required
          defaultValue={state.email ?? ""}
          aria-invalid={state.error ? true : undefined}
        />
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          aria-invalid={state.error ? true : undefined}
        />
      </div>
      <div aria-live="polite">
        {state.error ? (
          <p id="signin-error" role="alert" className="alert error">
            {state.error}
          </p>
        ) : null}
      </div>
      <div>
        <button type="submit" disabled={pending}>
          {pending ? "Signing in…" : "Sign in"}
        </button>
      </div>
    </form>
  );
}
