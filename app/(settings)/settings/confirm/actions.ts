"use server";

import { redirect } from "next/navigation";
import type { FormState } from "../../_lib/form-state";
import { field, runAction } from "../../_lib/run-action";
import { safeNextPath, settingsCaller } from "../../_lib/session";

/** Confirms it's the member (a code or backup code, or the password), then goes back to the page that asked. */
export async function confirmAction(_previous: FormState, form: FormData): Promise<FormState> {
  const result = await runAction(async () => {
    await (await settingsCaller()).security.confirm({
      code: field(form, "code") || undefined,
      password: field(form, "password") || undefined,
      backup: field(form, "backup") === "on",
    });
    return { status: "ok" };
  });
  if (result.status === "ok") redirect(safeNextPath(field(form, "next")));
  return result;
}
