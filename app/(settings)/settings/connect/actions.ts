"use server";

import { redirect, unstable_rethrow } from "next/navigation";
import { switchOrganisation } from "../../../../server/identity/session";
import { createSettingsCaller } from "../../../../server/settings/router";
import { settingsErrorMessage } from "../../../../server/settings/trpc";
import { field, fields } from "../../_lib/run-action";
import { settingsRequest } from "../../_lib/session";

/** The consent page again, on the same authorization request, with a message. */
function back(oauthQuery: string, message: string): never {
  redirect(`/settings/connect?${oauthQuery}&error=${encodeURIComponent(message)}`);
}

/**
 * Connects the client of the form's `oauthQuery` to the chosen organisation (switching the session to it first) with
 * the chosen mode and scopes, through the settings procedure `oauth.consent` (the rules of creating a key), then sends
 * the browser back to the client with the code. A refusal comes back to the page as a message.
 */
export async function connectAction(form: FormData): Promise<void> {
  const oauthQuery = field(form, "oauthQuery");
  const orgId = field(form, "orgId");
  let redirectUrl: string;
  try {
    const request = await settingsRequest();
    if (orgId) await switchOrganisation(request, orgId);
    const caller = createSettingsCaller({ request });
    const mode = field(form, "mode") === "test" ? "test" : "live";
    ({ redirectUrl } = await caller.oauth.consent({ oauthQuery, mode, scopes: fields(form, "scopes") }));
  } catch (error) {
    unstable_rethrow(error);
    back(oauthQuery, settingsErrorMessage(error));
  }
  redirect(redirectUrl);
}

/** Declines: the client is told `access_denied` at its redirect URI. */
export async function declineAction(form: FormData): Promise<void> {
  const oauthQuery = field(form, "oauthQuery");
  let redirectUrl: string;
  try {
    ({ redirectUrl } = await createSettingsCaller({ request: await settingsRequest() }).oauth.decline({ oauthQuery }));
  } catch (error) {
    unstable_rethrow(error);
    back(oauthQuery, settingsErrorMessage(error));
  }
  redirect(redirectUrl);
}
