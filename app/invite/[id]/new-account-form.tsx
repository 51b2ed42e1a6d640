"use client";

import { useActionState } from "react";
import { FormResult } from "../../(settings)/_components/form-result";
import { type FormState, IDLE } from "../../(settings)/_lib/form-state";
import { acceptWithNewAccountAction } from "./actions";

const FIELDS = ["name", "password"];

/**
 * Name and password for someone joining by invitation; the email is the invited one. A refusal about a field (a
 * password too short, whatever the browser checked) shows beside that field, the rest under the button.
 */
export function NewAccountForm({ invitationId, email }: { invitationId: string; email: string }) {
  const [state, action, pending] = useActionState(acceptWithNewAccountAction, IDLE);
  const kept = state.status === "error" ? (state.values ?? {}) : {};
  const refused = state.status === "error" && state.field && FIELDS.includes(state.field) ? state.field : null;
  const besideField = (name: string) =>
    refused === name ? (
      <p id={`invite-${name}-error`} role="alert" className="alert error">
        {state.message}
      </p>
    ) : null;
  const describedBy = (name: string, hint?: string) =>
    [refused === name ? `invite-${name}-error` : null, hint].filter(Boolean).join(" ") || undefined;
  const rest: FormState = refused ? IDLE : state;
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
          aria-invalid={refused === "name" ? true : undefined}
          aria-describedby={describedBy("name")}
        />
        {besideField("name")}
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
          aria-invalid={refused === "password" ? true : undefined}
          aria-describedby={describedBy("password", "invite-password-hint")}
        />
        <p id="invite-password-hint" className="hint">
          At least 10 characters.
        </p>
        {besideField("password")}
      </div>
      <div>
        <button type="submit" disabled={pending}>
          {pending ? "Joining…" : "Create account and join"}
        </button>
      </div>
      <FormResult state={rest} />
    </form>
  );
}
