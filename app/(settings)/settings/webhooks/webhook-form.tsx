"use client";

import { useActionState } from "react";
import { FormResult } from "../../_components/form-result";
import { type FormState, IDLE } from "../../_lib/form-state";

function list(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/**
 * Create or edit a webhook endpoint: URL, optional description, the events it receives (docs/api-contract.md §6.1:
 * names, every event of a resource, or `*` for all) and the fields whose updates it wants (§6.9). Keeps what was typed
 * when the service refuses it (its message is shown).
 */
export function WebhookForm({
  action,
  eventNames,
  resources,
  initial,
  endpointId,
  submitLabel,
  idPrefix,
  allowLoopback,
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  eventNames: readonly string[];
  /** Resources with a `<resource>.*` subscription. */
  resources: readonly string[];
  initial?: { url: string; description: string | null; events: string[]; changedFields: string[] | null };
  endpointId?: string;
  submitLabel: string;
  idPrefix: string;
  /** The server's `WEBHOOKS_ALLOW_LOOPBACK`: the hint says what the server actually accepts. */
  allowLoopback: boolean;
}) {
  const [state, formAction, pending] = useActionState(action, IDLE);
  const kept = state.status === "error" ? state.values : undefined;
  const url = (kept?.url as string | undefined) ?? initial?.url ?? "";
  const description = (kept?.description as string | undefined) ?? initial?.description ?? "";
  const events = new Set(kept ? list(kept.events) : (initial?.events ?? ["*"]));
  const changedFields = (kept?.changedFields as string | undefined) ?? initial?.changedFields?.join(", ") ?? "";
  return (
    <form action={formAction} className="stack">
      {endpointId ? <input type="hidden" name="id" value={endpointId} /> : null}
      <div className="field">
        <label htmlFor={`${idPrefix}-url`}>Endpoint URL</label>
        <input
          id={`${idPrefix}-url`}
          name="url"
          type="url"
          required
          maxLength={2048}
          defaultValue={url}
          placeholder="https://example.com/webhooks/crm"
          aria-describedby={`${idPrefix}-url-hint`}
        />
        <p id={`${idPrefix}-url-hint`} className="hint">
          An https URL your server answers with a 2xx status.{" "}
          {allowLoopback ? (
            <>
              Private addresses are refused; loopback addresses (<code>localhost</code>, <code>127.0.0.1</code>) are
              allowed on this server (<code>WEBHOOKS_ALLOW_LOOPBACK=true</code>), for local development.
            </>
          ) : (
            <>
              Private and loopback addresses are refused; for local development, the server's operator can allow
              loopback with <code>WEBHOOKS_ALLOW_LOOPBACK=true</code>.
            </>
          )}
        </p>
      </div>
      <div className="field">
        <label htmlFor={`${idPrefix}-description`}>
          Description <span className="hint">(optional)</span>
        </label>
        <input
          id={`${idPrefix}-description`}
          name="description"
          type="text"
          maxLength={500}
          defaultValue={description}
        />
      </div>
      <fieldset>
        <legend>Events</legend>
        <label className="choice">
          <input type="checkbox" name="events" value="*" defaultChecked={events.has("*")} />
          <span className="choice-text">
            <span>
              All events <code>*</code>
            </span>
            <span className="hint">Every event below and any added later. Overrides the individual choices.</span>
          </span>
        </label>
        <p className="hint">Every event of a resource, including events added to it later:</p>
        <div className="choice-grid">
          {resources.map((resource) => (
            <label className="choice" key={resource}>
              <input
                type="checkbox"
                name="events"
                value={`${resource}.*`}
                defaultChecked={events.has(`${resource}.*`)}
              />
              <code>{resource}.*</code>
            </label>
          ))}
        </div>
        <p className="hint">Or single events:</p>
        <div className="choice-grid">
          {eventNames.map((name) => (
            <label className="choice" key={name}>
              <input type="checkbox" name="events" value={name} defaultChecked={events.has(name)} />
              <code>{name}</code>
            </label>
          ))}
        </div>
      </fieldset>
      <div className="field">
        <label htmlFor={`${idPrefix}-changed-fields`}>
          Only updates that change <span className="hint">(optional)</span>
        </label>
        <input
          id={`${idPrefix}-changed-fields`}
          name="changedFields"
          type="text"
          maxLength={1400}
          defaultValue={changedFields}
          placeholder="lifecycleStatus, stage, customFields.contract_tier"
          aria-describedby={`${idPrefix}-changed-fields-hint`}
        />
        <p id={`${idPrefix}-changed-fields-hint`} className="hint">
          Up to 20 field names, separated by commas: <code>*.updated</code> events are then delivered only when they
          changed one of them (creations, deletions and the other events always are). Fields of the subscribed resources
          as the API returns them, or <code>customFields.&lt;key&gt;</code> for a custom field. Empty: every update.
        </p>
      </div>
      <div>
        <button type="submit" disabled={pending}>
          {pending ? "Saving…" : submitLabel}
        </button>
      </div>
      <FormResult state={state} />
    </form>
  );
}
