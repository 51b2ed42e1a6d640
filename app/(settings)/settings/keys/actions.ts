"use server";

import { revalidatePath } from "next/cache";
import type { FormState } from "../../_lib/form-state";
import { formatTime } from "../../_lib/format";
import { field, fields, runAction } from "../../_lib/run-action";
import { grantsNothingNote } from "../../_lib/scopes";
import { settingsCaller } from "../../_lib/session";

const ONCE = "Copy it now: it is shown only this once and cannot be retrieved later.";

function keyNotes(scopes: string[]): string {
  const notes = scopes.map(grantsNothingNote).filter(Boolean);
  return [`Send it as Authorization: Bearer <key>.`, ...notes].join(" ");
}

/**
 * Creates an API key from the create form (with "Organisation service key" ticked, one that outlives its creator's
 * membership, docs/api-contract.md §11.5); the raw key is returned in the form state, shown once.
 */
export async function createKeyAction(_previous: FormState, form: FormData): Promise<FormState> {
  const name = field(form, "name");
  const mode = field(form, "mode") === "live" ? "live" : "test";
  const scopes = fields(form, "scopes");
  const serviceKey = field(form, "serviceKey") === "on";
  return runAction(
    async () => {
      const { key, raw } = await (await settingsCaller()).apiKeys.create({ name, mode, scopes, serviceKey });
      revalidatePath("/settings/keys");
      const kind = key.serviceKey ? `${mode} organisation service key` : `${mode} key`;
      return {
        status: "ok",
        message: `Created ${kind} “${key.name}” with scopes ${key.scopes.join(", ")}.`,
        reveal: { label: `Your new API key. ${ONCE}`, value: raw, note: keyNotes(key.scopes) },
      };
    },
    { name, mode, scopes, ...(serviceKey ? { serviceKey: "on" } : {}) },
  );
}

/** Revokes the key named by the form's `id`. */
export async function revokeKeyAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    await (await settingsCaller()).apiKeys.revoke({ id: field(form, "id") });
    revalidatePath("/settings/keys");
    return { status: "ok", message: "Key revoked: requests with it now get 401 unauthorized." };
  });
}

/** Rotates the key named by the form's `id`; the new raw key is returned in the form state, shown once. */
export async function rotateKeyAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    const { key, raw, previous } = await (await settingsCaller()).apiKeys.rotate({ id: field(form, "id") });
    revalidatePath("/settings/keys");
    return {
      status: "ok",
      message: `Rotated: the old key keeps working until ${formatTime(previous.expiresAt)}; revoke it sooner once the new one is in place.`,
      reveal: { label: `The new key for “${key.name}”. ${ONCE}`, value: raw, note: keyNotes(key.scopes) },
    };
  });
}

/** Revokes the OAuth connection whose key the form's `keyId` names: the client's tokens get 401 from now on. */
export async function revokeConnectionAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    await (await settingsCaller()).oauth.revoke({ keyId: field(form, "keyId") });
    revalidatePath("/settings/keys");
    return { status: "ok", message: "Disconnected: the app's requests now get 401 and it must be connected again." };
  });
}
