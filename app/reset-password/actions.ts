"use server";

import { redirect } from "next/navigation";
import { resetPassword } from "../../server/identity/password-reset";
import type { FormState } from "../(settings)/_lib/form-state";
import { field, runAction } from "../(settings)/_lib/run-action";
import { settingsRequest } from "../(settings)/_lib/session";

/** Sets the new password with the link's token (every session of the user ends), then the sign-in page. */
export async function resetPasswordAction(_previous: FormState, form: FormData): Promise<FormState> {
  const result = await runAction(async () => {
    await resetPassword(await settingsRequest(), field(form, "token"), field(form, "password"));
    return { status: "ok" };
  });
  if (result.status === "ok") redirect("/signin?reset=1");
  return result;
}
