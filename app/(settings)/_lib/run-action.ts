import { TRPCError } from "@trpc/server";
import { redirect, unstable_rethrow } from "next/navigation";
import { settingsErrorMessage } from "../../../server/routers/settings/trpc";
import type { FormState } from "./form-state";

/**
 * Runs a server action's work and turns a thrown error into a form message: the ApiError's message (spec §7 text),
 * or the zod issues of a refused input. An ended session sends the user to sign in; Next's redirects pass through.
 */
export async function runAction(
  work: () => Promise<FormState>,
  values?: Record<string, string | string[]>,
): Promise<FormState> {
  try {
    return await work();
  } catch (error) {
    unstable_rethrow(error);
    if (error instanceof TRPCError && error.code === "UNAUTHORIZED") redirect("/signin");
    return { status: "error", message: settingsErrorMessage(error), values };
  }
}

/** The text value of a form field ("" when missing). */
export function field(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === "string" ? value : "";
}

/** Every text value of a repeated form field (checkbox groups). */
export function fields(form: FormData, name: string): string[] {
  return form.getAll(name).filter((value): value is string => typeof value === "string");
}
