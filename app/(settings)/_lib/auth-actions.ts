"use server";

import { redirect } from "next/navigation";
import { signOut as endSession, switchOrganisation } from "../../../server/identity/session";
import { settingsRequest } from "./session";

/** Signs out: the session ends on the server (its cookie no longer works anywhere), then the sign-in page. */
export async function signOut(): Promise<void> {
  await endSession(await settingsRequest());
  redirect("/signin?signedOut=1");
}

/** Makes another of the user's organisations the one the settings act on, then shows its overview. */
export async function switchOrganisationAction(form: FormData): Promise<void> {
  const orgId = form.get("orgId");
  if (typeof orgId === "string" && orgId) await switchOrganisation(await settingsRequest(), orgId);
  redirect("/settings");
}
