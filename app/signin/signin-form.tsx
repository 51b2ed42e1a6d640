"use client";

import { useActionState } from "react";
import { type SignInState, signIn } from "./actions";

/** The sign-in form; works without JavaScript (server action), keeps the email after a refused attempt. */
export function SignInForm({ next }: { next: string }) {
  const [state, action, pending] = useActionState<SignInState, FormData>(signIn, {});
  return (
    <form action={action} className="stack" aria-describedby={state.error ? "signin-error" : undefined}>
      <input type="hidden" name="next" value={next} />
      <div className="field">
        <label htmlFor="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autoComplete="username"
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
