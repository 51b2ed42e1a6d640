/** What a settings form shows after its server action ran (React `useActionState` state). */
export interface FormState {
  status: "idle" | "ok" | "error";
  message?: string;
  /** A value shown once with a copy button: a new API key or a webhook signing secret. */
  reveal?: { label: string; value: string; note?: string };
  /** A link to follow from the result (the page of what was just created). */
  link?: { href: string; label: string };
  /** The field a refusal is about (its form `name`), when the server named one, so a form can show it beside it. */
  field?: string;
  /** The submitted values, so a refused form keeps what was typed (React resets forms after an action). */
  values?: Record<string, string | string[]>;
}

/** State before the first submission. */
export const IDLE: FormState = { status: "idle" };
