"use client";

import { type ReactNode, useActionState } from "react";
import { type FormState, IDLE } from "../_lib/form-state";
import { FormResult } from "./form-result";

/**
 * A consequential action behind a disclosure: the summary opens an explanation and the confirming button (keyboard
 * and no-JavaScript friendly, no dialog). The disclosure stays open to show the result. `showButton: false` keeps
 * an earlier result visible once the action no longer applies.
 */
export function ConfirmAction({
  action,
  summary,
  explanation,
  submitLabel,
  pendingLabel,
  danger = false,
  showButton = true,
  children,
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  summary: string;
  explanation: ReactNode;
  submitLabel: string;
  pendingLabel?: string;
  danger?: boolean;
  showButton?: boolean;
  children?: ReactNode;
}) {
  const [state, formAction, pending] = useActionState(action, IDLE);
  if (!showButton && state.status === "idle") return null;
  return (
    <details open={state.status !== "idle" ? true : undefined}>
      <summary>{summary}</summary>
      <form action={formAction}>
        {children}
        {showButton ? (
          <>
            <p className="hint">{explanation}</p>
            <button type="submit" className={danger ? "danger" : undefined} disabled={pending}>
              {pending ? (pendingLabel ?? submitLabel) : submitLabel}
            </button>
          </>
        ) : null}
        <FormResult state={state} />
      </form>
    </details>
  );
}
