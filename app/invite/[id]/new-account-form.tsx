"use client";

import { useActionState } from "react";
import { FormResult } from "../../(settings)/_components/form-result";
import { IDLE } from "../../(settings)/_lib/form-state";
import { acceptWithNewAccountAction } from "./actions";

/** Name and password for someone joining by invitation; the email is the invited one. */
export function NewAccountForm({ invitationId, email }: { invitationId: string; email: string }) {
  const [state, action, pending] = useActionState(acceptWithNewAccountAction, IDLE);
  const kept = state.status === "error" ? (state.values ?? {}) : {};
  return (
    <form action={action} className="stack">
      <input type="hidden" name="invitationId" value={invitationId} />
      <div className="field">
        <label htmlFor="invite-email">Email</label>
        <input id="invite-email" type="email" value={email} readOnly autoComplete="username" />
      </div>
      <div className="field">
        <label htmlFor="invite-name">Your name</label>
        <input
          id="invite-name"
          name="name"
          type="text"
          required
          maxLength={100}
          autoComplete="name"
          defaultValue={(kept.name as string | undefined) ?? ""}
        />
      </div>
      <div className="field">
        <label htmlFor="invite-password">Choose a password</label>
        <input
          id="invite-password"
          name="password"
          type="password"
          required
          minLength={10}
          maxLength={128}
          autoComplete="new-password"
          aria-describedby="invite-password-hint"
        />
        <p id="invite-password-hint" className="hint">
          At least 10 characters.
        </p>
      </div>
      <div>
        <button type="submit" disabled={pending}>
          {pending ? "Joining…" : "Create account and join"}
        </button>
      </div>
      <FormResult state={state} />
    </form>
  );
}
