"use client";

import { type ReactNode, useActionState } from "react";
import { type FormState, IDLE } from "../_lib/form-state";
import { FormResult } from "./form-result";

/**
 * A form posting to a server action with `useActionState`: works without JavaScript (the page re-renders with the
 * action's result) and shows the result under the button. `showButton: false` keeps an earlier result visible
 * after the action no longer applies (a revoked key, a rotated key).
 */
export function ActionForm({
  action,
  submitLabel,
  pendingLabel,
  buttonClassName,
  className,
  showButton = true,
  children,
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  submitLabel: string;
  pendingLabel?: string;
  buttonClassName?: string;
  className?: string;
  showButton?: boolean;
  children?: ReactNode;
}) {
  const [state, formAction, pending] = useActionState(action, IDLE);
  if (!showButton && state.status === "idle") return null;
  return (
    <form action={formAction} className={className}>
      {children}
      {showButton ? (
        <button type="submit" className={buttonClassName} disabled={pending}>
          {pending ? (pendingLabel ?? submitLabel) : submitLabel}
        </button>
      ) : null}
      <FormResult state={state} />
    </form>
  );
}
