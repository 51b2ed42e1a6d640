"use client";

import { useActionState, useState } from "react";
import { FormResult } from "../../_components/form-result";
import { type FormState, IDLE } from "../../_lib/form-state";
import type { DeprecatedScopeOption, ScopeOption } from "../../_lib/scopes";

function list(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/**
 * The create-key form: name, live or test, and scopes from docs/api-contract.md §5's table with what each implies.
 * Deprecated scopes can be picked so their rule is visible: `reconciliation:*` and `onboarding:read` are refused with
 * the service's message, `contracts:read` is accepted with a note that it grants nothing. `live` says whether the
 * member's role may create live keys; `beyondRole` lists the scopes the role may not give a key (`admin:read` for a
 * developer), shown but not selectable. "Organisation service key" marks a key that survives its creator's removal
 * (docs/api-contract.md §11.5).
 */
export function CreateKeyForm({
  action,
  scopes,
  deprecated,
  live,
  beyondRole,
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  scopes: ScopeOption[];
  deprecated: DeprecatedScopeOption[];
  live: "allowed" | "not-allowed";
  beyondRole: string[];
}) {
  const [state, formAction, pending] = useActionState(action, IDLE);
  const kept = state.status === "error" ? (state.values ?? {}) : {};
  const chosen = new Set(list(kept.scopes));
  const mode = (kept.mode as string | undefined) ?? "test";
  const deprecatedChosen = deprecated.some((option) => chosen.has(option.scope));
  // Open while the user keeps it open or a deprecated scope is ticked (a controlled `open` would otherwise close it).
  const [deprecatedOpen, setDeprecatedOpen] = useState(false);
  return (
    <form action={formAction} className="stack" aria-labelledby="create-key-heading">
      <div className="field">
        <label htmlFor="key-name">Name</label>
        <input
          id="key-name"
          name="name"
          type="text"
          required
          maxLength={100}
          defaultValue={(kept.name as string | undefined) ?? ""}
          aria-describedby="key-name-hint"
        />
        <p id="key-name-hint" className="hint">
          What uses it, e.g. “PSA sync”. Shown in the key list and the usage log.
        </p>
      </div>
      <fieldset>
        <legend>Mode</legend>
        <label className="choice">
          <input type="radio" name="mode" value="test" defaultChecked={mode === "test"} />
          <span className="choice-text">
            <span>
              Test key <code>msp_test_…</code>
            </span>
            <span className="hint">Same data as live keys, flagged as test traffic, causes no webhook deliveries.</span>
          </span>
        </label>
        <label className="choice">
          <input
            type="radio"
            name="mode"
            value="live"
            defaultChecked={mode === "live" && live !== "not-allowed"}
            disabled={live === "not-allowed"}
          />
          <span className="choice-text">
            <span>
              Live key <code>msp_live_…</code>
            </span>
            <span className="hint">
              Production traffic; its changes are delivered to your webhook endpoints.
              {live === "not-allowed" ? " Only owners and admins create live keys." : null}
            </span>
          </span>
        </label>
      </fieldset>
      <fieldset>
        <legend>Scopes</legend>
        <p className="hint">
          A write scope also grants the matching read scope; <code>admin:read</code> grants every read scope.
        </p>
        <div className="choice-grid">
          {scopes.map((option) => {
            const refused = beyondRole.includes(option.scope);
            return (
              <label className="choice" key={option.scope}>
                <input
                  type="checkbox"
                  name="scopes"
                  value={option.scope}
                  defaultChecked={!refused && chosen.has(option.scope)}
                  disabled={refused}
                />
                <span className="choice-text">
                  <code>{option.scope}</code>
                  <span className="hint">
                    {option.grants}
                    {option.implies ? ` (also grants ${option.implies})` : ""}
                    {refused ? ". Only owners and admins give a key this scope." : ""}
                  </span>
                </span>
              </label>
            );
          })}
        </div>
        <details
          open={deprecatedOpen || deprecatedChosen}
          onToggle={(event) => setDeprecatedOpen(event.currentTarget.open)}
        >
          <summary>Deprecated scopes</summary>
          <div className="choice-grid">
            {deprecated.map((option) => (
              <label className="choice" key={option.scope}>
                <input type="checkbox" name="scopes" value={option.scope} defaultChecked={chosen.has(option.scope)} />
                <span className="choice-text">
                  <code>{option.scope}</code>
                  <span className="hint">
                    {option.accepted ? "Accepted, " : "Refused: "}
                    {option.note}
                  </span>
                </span>
              </label>
            ))}
          </div>
        </details>
      </fieldset>
      <label className="choice">
        <input type="checkbox" name="serviceKey" defaultChecked={kept.serviceKey === "on"} />
        <span className="choice-text">
          <span>Organisation service key</span>
          <span className="hint">
            For integrations that must outlive their creator (PSA sync, RMM import): it keeps working when you are
            removed from the team or deprovisioned by the directory. Other keys you create are revoked then.
          </span>
        </span>
      </label>
      <div>
        <button type="submit" disabled={pending}>
          {pending ? "Creating…" : "Create key"}
        </button>
      </div>
      <FormResult state={state} />
    </form>
  );
}
