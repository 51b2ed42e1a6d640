"use server";

import { revalidatePath } from "next/cache";
import type { FormState } from "../../../_lib/form-state";
import { field, runAction } from "../../../_lib/run-action";
import { settingsCaller } from "../../../_lib/session";

const PAGE = "/settings/security/directory";
const ONCE = "Copy it now: it is shown only this once and cannot be retrieved later.";

/**
 * Makes the organisation's SCIM token (`directory.createToken`, docs/api-contract.md §11.5); the token is returned in
 * the form state, shown once, with the base URL to give the directory.
 */
export async function createTokenAction(_previous: FormState): Promise<FormState> {
  return runAction(async () => {
    const { token, baseUrl } = await (await settingsCaller()).directory.createToken();
    revalidatePath(PAGE);
    return {
      status: "ok",
      message: "SCIM token created.",
      reveal: {
        label: `Your SCIM token. ${ONCE}`,
        value: token,
        note: `In your directory (Microsoft Entra: Provisioning → Admin credentials), set the tenant URL to ${baseUrl} and the secret token to this value.`,
      },
    };
  });
}

/**
 * Rotates the SCIM token (`directory.rotateToken`): the new token is shown once, the old one stops working now.
 * Source: docs/api-contract.md §11.5.
 */
export async function rotateTokenAction(_previous: FormState): Promise<FormState> {
  return runAction(async () => {
    const { token } = await (await settingsCaller()).directory.rotateToken();
    revalidatePath(PAGE);
    return {
      status: "ok",
      message: "Rotated: the previous token stopped working. Paste the new one into the directory now.",
      reveal: { label: `Your new SCIM token. ${ONCE}`, value: token },
    };
  });
}

/**
 * Revokes the SCIM token the form's `id` names (`directory.revokeToken`): the directory's requests get 401.
 * Source: docs/api-contract.md §11.5.
 */
export async function revokeTokenAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    await (await settingsCaller()).directory.revokeToken({ id: field(form, "id") });
    revalidatePath(PAGE);
    return {
      status: "ok",
      message: "Token revoked: the directory's requests with it now get 401. Nobody was deprovisioned.",
    };
  });
}
