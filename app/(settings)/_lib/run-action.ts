import { TRPCError } from "@trpc/server";
import { headers } from "next/headers";
import { redirect, unstable_rethrow } from "next/navigation";
import { ZodError } from "zod";
import { ApiError } from "../../../server/errors";
import { StepUpRequiredError } from "../../../server/identity/session";
import { settingsErrorMessage } from "../../../server/settings/trpc";
import type { FormState } from "./form-state";

// The page a form was posted from, to come back to after confirming it's the user.
async function currentPath(): Promise<string> {
  const referer = (await headers()).get("referer");
  try {
    const url = new URL(referer ?? "");
    return `${url.pathname}${url.search}`;
  } catch {
    return "/settings";
  }
}

/**
 * Runs a server action's work and turns a thrown error into a form message: the ApiError's message
 * (docs/api-contract.md §7 text), the zod issues of a refused input, or a refusal in the page's words (403), with the
 * field the first issue names (`field`). An action that needs a recent sign-in links to the confirmation page and
 * back. An ended session sends the user to sign in; Next's redirects pass through.
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
    if (error instanceof TRPCError && error.cause instanceof StepUpRequiredError) {
      const next = await currentPath();
      return {
        status: "error",
        message: settingsErrorMessage(error),
        link: { href: `/settings/confirm?next=${encodeURIComponent(next)}`, label: "Confirm it's you" },
        values,
      };
    }
    return { status: "error", message: settingsErrorMessage(error), field: refusedField(error), values };
  }
}

// The top-level field the first detail of a refused input names ("password" for ["password"]).
function refusedField(error: unknown): string | undefined {
  const cause = error instanceof TRPCError ? (error.cause ?? error) : error;
  const path =
    cause instanceof ApiError
      ? cause.details?.[0]?.path
      : cause instanceof ZodError
        ? cause.issues[0]?.path
        : undefined;
  return typeof path?.[0] === "string" ? path[0] : undefined;
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
