"use client";

import { useActionState } from "react";
import { FormResult } from "../../_components/form-result";
import { type FormState, IDLE } from "../../_lib/form-state";

type Action = (state: FormState, form: FormData) => Promise<FormState>;

/** A field definition as the edit form needs it. */
export interface EditableField {
  id: string;
  key: string;
  label: string;
  type: string;
  description: string | null;
  required: boolean;
  searchable: boolean;
  options: Array<{ value: string; label: string; archivedAt: string | null }> | null;
}

const TYPE_NAMES: Record<string, string> = {
  text: "Text (up to 1,000 characters)",
  number: "Number",
  boolean: "Yes / no",
  date: "Date",
  datetime: "Date and time",
  select: "One option (select)",
  multiSelect: "Several options (multi-select)",
  url: "Link (http or https)",
  email: "Email address",
  currency: "Amount with currency",
};

function text(value: string | string[] | undefined): string {
  return typeof value === "string" ? value : "";
}

/**
 * The form that defines a field (docs/api-contract.md §2.13): resource, key, label, type, description, options (select
 * and multi-select), required and searchable. Keeps what was typed when the service refuses it.
 */
export function CreateFieldForm({ action, resources }: { action: Action; resources: readonly string[] }) {
  const [state, formAction, pending] = useActionState(action, IDLE);
  const kept = state.status === "error" ? (state.values ?? {}) : {};
  const flags = new Set(Array.isArray(kept.flags) ? kept.flags : []);
  return (
    <form action={formAction} className="stack" aria-labelledby="new-field-heading">
      <div className="field">
        <label htmlFor="field-resource">Records</label>
        <select id="field-resource" name="resource" defaultValue={text(kept.resource) || "account"}>
          {resources.map((resource) => (
            <option key={resource} value={resource}>
              {resource}s
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="field-label">Label</label>
        <input id="field-label" name="label" type="text" required maxLength={100} defaultValue={text(kept.label)} />
      </div>
      <div className="field">
        <label htmlFor="field-key">Key</label>
        <input
          id="field-key"
          name="key"
          type="text"
          required
          maxLength={40}
          pattern="[a-z][a-z0-9_]{0,39}"
          defaultValue={text(kept.key)}
          aria-describedby="field-key-hint"
        />
        <p id="field-key-hint" className="hint">
          How the API names it: <code>customFields.&lt;key&gt;</code>. Lower-case letters, digits and _, starting with a
          letter; it never changes.
        </p>
      </div>
      <div className="field">
        <label htmlFor="field-type">Type</label>
        <select id="field-type" name="type" defaultValue={text(kept.type) || "text"} aria-describedby="field-type-hint">
          {Object.entries(TYPE_NAMES).map(([type, name]) => (
            <option key={type} value={type}>
              {name}
            </option>
          ))}
        </select>
        <p id="field-type-hint" className="hint">
          The type never changes.
        </p>
      </div>
      <div className="field">
        <label htmlFor="field-description">
          Description <span className="hint">(optional)</span>
        </label>
        <input
          id="field-description"
          name="description"
          type="text"
          maxLength={500}
          defaultValue={text(kept.description)}
        />
      </div>
      <div className="field">
        <label htmlFor="field-options">
          Options <span className="hint">(select and multi-select only)</span>
        </label>
        <textarea
          id="field-options"
          name="options"
          rows={4}
          defaultValue={text(kept.options)}
          aria-describedby="field-options-hint"
        />
        <p id="field-options-hint" className="hint">
          One per line: <code>value | label</code>, e.g. <code>gold | Gold</code>. Values never change.
        </p>
      </div>
      <fieldset>
        <legend>Rules</legend>
        <label className="choice">
          <input type="checkbox" name="flags" value="required" defaultChecked={flags.has("required")} />
          <span>Required: every new record must have a value</span>
        </label>
        <label className="choice">
          <input type="checkbox" name="flags" value="searchable" defaultChecked={flags.has("searchable")} />
          <span>Searchable</span>
        </label>
      </fieldset>
      <div>
        <button type="submit" disabled={pending}>
          {pending ? "Adding…" : "Add field"}
        </button>
      </div>
      <FormResult state={state} />
    </form>
  );
}

/**
 * The form that changes a field: label, description, rules, each option's label and whether it is archived, and new
 * options. Key, records and type are shown, not editable.
 */
export function EditFieldForm({ action, field }: { action: Action; field: EditableField }) {
  const [state, formAction, pending] = useActionState(action, IDLE);
  const prefix = `edit-${field.id}`;
  return (
    <form action={formAction} className="stack">
      <input type="hidden" name="id" value={field.id} />
      <div className="field">
        <label htmlFor={`${prefix}-label`}>Label</label>
        <input id={`${prefix}-label`} name="label" type="text" required maxLength={100} defaultValue={field.label} />
      </div>
      <div className="field">
        <label htmlFor={`${prefix}-description`}>Description</label>
        <input
          id={`${prefix}-description`}
          name="description"
          type="text"
          maxLength={500}
          defaultValue={field.description ?? ""}
        />
      </div>
      <fieldset>
        <legend>Rules</legend>
        <label className="choice">
          <input type="checkbox" name="flags" value="required" defaultChecked={field.required} />
          <span>Required</span>
        </label>
        <label className="choice">
          <input type="checkbox" name="flags" value="searchable" defaultChecked={field.searchable} />
          <span>Searchable</span>
        </label>
      </fieldset>
      {field.options ? (
        <fieldset>
          <legend>Options</legend>
          {field.options.map((option) => (
            <div key={option.value} className="field">
              <input type="hidden" name="optionValue" value={option.value} />
              <label htmlFor={`${prefix}-option-${option.value}`}>
                Label of <code>{option.value}</code>
              </label>
              <input
                id={`${prefix}-option-${option.value}`}
                name={`optionLabel:${option.value}`}
                type="text"
                required
                maxLength={100}
                defaultValue={option.label}
              />
              <label className="choice">
                <input
                  type="checkbox"
                  name="archivedOptions"
                  value={option.value}
                  defaultChecked={option.archivedAt !== null}
                />
                <span>Archived: records keep it, new values cannot pick it</span>
              </label>
            </div>
          ))}
          <div className="field">
            <label htmlFor={`${prefix}-new-options`}>New options</label>
            <textarea id={`${prefix}-new-options`} name="newOptions" rows={2} aria-describedby={`${prefix}-new-hint`} />
            <p id={`${prefix}-new-hint`} className="hint">
              One per line: <code>value | label</code>.
            </p>
          </div>
        </fieldset>
      ) : null}
      <div>
        <button type="submit" disabled={pending}>
          {pending ? "Saving…" : `Save ${field.label}`}
        </button>
      </div>
      <FormResult state={state} />
    </form>
  );
}
