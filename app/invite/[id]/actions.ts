"use server";

import { redirect } from "next/navigation";
import {
  acceptInvitationSignedIn,
  acceptInvitationWithNewAccount,
} from "../../../server/identity/team/accept-invitation";
import type { FormState } from "../../(settings)/_lib/form-state";
import { field, runAction } from "../../(settings)/_lib/run-action";
import { settingsRequest } from "../../(settings)/_lib/session";

/** Accepts the invitation with a new account (name and password), signs in and opens the settings. */
export async function acceptWithNewAccountAction(_previous: FormState, form: FormData): Promise<FormState> {
  const name = field(form, "name");
  const result = await runAction(
    async () => {
      await acceptInvitationWithNewAccount(await settingsRequest(), field(form, "invitationId"), {
        name,
        password: field(form, "password"),
      });
      return { status: "ok" };
    },
    { name },
  );
  if (result.status === "ok") redirect("/settings");
  return result;
}

/** Accepts the invitation as the signed-in user and opens the organisation's settings. */
export async function acceptSignedInAction(_previous: FormState, form: FormData): Promise<FormState> {
  const result = await runAction(async () => {
    await acceptInvitationSignedIn(await settingsRequest(), field(form, "invitationId"));
    return { status: "ok" };
  });
  if (result.status === "ok") redirect("/settings");
  return result;
}
