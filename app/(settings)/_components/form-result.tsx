import type { FormState } from "../_lib/form-state";
import { CopyButton } from "./copy-button";

/**
 * The outcome of a settings form: an error (announced as an alert), a confirmation, and a value shown once with a
 * copy button. The polite live region is always present so screen readers announce what appears in it.
 */
export function FormResult({ state }: { state: FormState }) {
  return (
    <div aria-live="polite">
      {state.status === "error" && state.message ? (
        <div role="alert" className="alert error">
          {state.message}
        </div>
      ) : null}
      {state.status === "ok" && state.message ? <p className="alert success">{state.message}</p> : null}
      {state.status === "ok" && state.reveal ? (
        <div className="reveal">
          <p>
            <strong>{state.reveal.label}</strong>
          </p>
          <code className="secret" data-testid="revealed-secret">
            {state.reveal.value}
          </code>
          <CopyButton value={state.reveal.value} />
          {state.reveal.note ? <p>{state.reveal.note}</p> : null}
        </div>
      ) : null}
      {state.link ? (
        <p>
          <a href={state.link.href}>{state.link.label}</a>
        </p>
      ) : null}
    </div>
  );
}
