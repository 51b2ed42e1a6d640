"use server";

import { revalidatePath } from "next/cache";
import type { FormState } from "../../_lib/form-state";
import { field, fields, runAction } from "../../_lib/run-action";
import { settingsCaller } from "../../_lib/session";

/** Options typed one per line, `value | label` (the label defaults to the value); blank lines are skipped. */
function optionLines(text: string): Array<{ value: string; label: string }> {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const bar = line.indexOf("|");
      const value = (bar < 0 ? line : line.slice(0, bar)).trim();
      const label = bar < 0 ? "" : line.slice(bar + 1).trim();
      return { value, label: label || value };
    });
}

function refresh(): void {
  revalidatePath("/settings/fields");
}

/** Defines a custom field from the create form (docs/api-contract.md §2.13). */
export async function createFieldAction(_previous: FormState, form: FormData): Promise<FormState> {
  const values = {
    resource: field(form, "resource"),
    key: field(form, "key"),
    label: field(form, "label"),
    type: field(form, "type"),
    description: field(form, "description"),
    options: field(form, "options"),
    flags: fields(form, "flags"),
  };
  return runAction(async () => {
    const options = optionLines(values.options);
    const created = await (await settingsCaller()).customFields.create({
      resource: values.resource as never,
      key: values.key.trim(),
      label: values.label,
      type: values.type as never,
      description: values.description.trim() || undefined,
      options: options.length > 0 ? options : undefined,
      required: values.flags.includes("required"),
      searchable: values.flags.includes("searchable"),
    });
    refresh();
    return {
      status: "ok",
      message: `Field ${created.label} (customFields.${created.key}) added to ${created.resource}s.`,
    };
  }, values);
}

/**
 * Saves a field's label, description, flags and options: each existing option's label and archived box, and new
 * options typed one per line.
 */
export async function updateFieldAction(_previous: FormState, form: FormData): Promise<FormState> {
  const id = field(form, "id");
  const existing = fields(form, "optionValue");
  return runAction(async () => {
    const added = optionLines(field(form, "newOptions"));
    const options = [
      ...existing.map((value) => ({
        value,
        label: field(form, `optionLabel:${value}`),
        archived: fields(form, "archivedOptions").includes(value),
      })),
      ...added,
    ];
    const flags = fields(form, "flags");
    const updated = await (await settingsCaller()).customFields.update({
      id,
      label: field(form, "label"),
      description: field(form, "description").trim() || null,
      required: flags.includes("required"),
      searchable: flags.includes("searchable"),
      options: options.length > 0 ? options : undefined,
    });
    refresh();
    return { status: "ok", message: `Field ${updated.label} saved.` };
  });
}

/** Archives the field named by the form's `id`. */
export async function archiveFieldAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    const archived = await (await settingsCaller()).customFields.archive({ id: field(form, "id") });
    refresh();
    return {
      status: "ok",
      message: `Field ${archived.label} archived: its values are gone from records now and purged in 30 days.`,
    };
  });
}
