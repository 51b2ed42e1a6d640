"use server";

import { redirect } from "next/navigation";
import { endSession } from "../../../server/services/sessions";
import { clearSessionCookie, sessionToken } from "./session";

/** Signs out: deletes the session row and the cookie, then shows the sign-in page. */
export async function signOut(): Promise<void> {
  await endSession(await sessionToken());
  await clearSessionCookie();
  redirect("/signin?signedOut=1");
}
