"use server";

import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import type { FormState } from "../../_lib/form-state";
import { formatTime } from "../../_lib/format";
import { field, runAction } from "../../_lib/run-action";
import { settingsCaller } from "../../_lib/session";

function invitationShown(result: {
  email: string;
  role: string;
  link: string;
  expiresAt: Date;
  mailed: string;
}): FormState {
  const mailed =
    result.mailed === "sent"
      ? `It was also mailed to ${result.email}.`
      : result.mailed === "failed"
        ? "Mailing it failed: send the link yourself."
        : "Mail is not configured: send the link yourself.";
  return {
    status: "ok",
    message: `Invited ${result.email} as ${result.role}.`,
    reveal: {
      label: `Invitation link for ${result.email}, valid until ${formatTime(result.expiresAt)}. It is shown only this once.`,
      value: result.link,
      note: mailed,
    },
  };
}

/** Invites an email with a role; the link is returned in the form state, shown once. */
export async function inviteAction(_previous: FormState, form: FormData): Promise<FormState> {
  const email = field(form, "email");
  const role = field(form, "role");
  return runAction(
    async () => {
      const result = await (await settingsCaller()).team.invite({ email, role });
      revalidatePath("/settings/team");
      return invitationShown(result);
    },
    { email, role },
  );
}

/** Sends a pending invitation again as a new link (the old one stops working). */
export async function resendInvitationAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    const result = await (await settingsCaller()).team.resendInvitation({ email: field(form, "email") });
    revalidatePath("/settings/team");
    return invitationShown(result);
  });
}

/** Revokes the pending invitation of the form's `email`. */
export async function revokeInvitationAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    await (await settingsCaller()).team.revokeInvitation({ email: field(form, "email") });
    revalidatePath("/settings/team");
    return { status: "ok", message: "Invitation revoked: its link no longer works." };
  });
}

/** Gives the member `memberId` the role `role`. */
export async function changeRoleAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    const member = await (await settingsCaller()).team.changeRole({
      memberId: field(form, "memberId"),
      role: field(form, "role"),
    });
    revalidatePath("/settings/team");
    return { status: "ok", message: `${member.email} is now ${member.role}, from their next page.` };
  });
}

/** Removes the member `memberId`, and with `revokeKeys` ticked the keys they created. */
export async function removeMemberAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    const { revokedKeys } = await (await settingsCaller()).team.removeMember({
      memberId: field(form, "memberId"),
      revokeKeys: field(form, "revokeKeys") === "on",
    });
    revalidatePath("/settings/team");
    const keys =
      revokedKeys === 1
        ? " 1 key they created is revoked."
        : revokedKeys > 1
          ? ` ${revokedKeys} keys they created are revoked.`
          : "";
    return { status: "ok", message: `Member removed: their next page load is refused.${keys}` };
  });
}

/** Makes the member `memberId` an owner and the acting owner an admin. */
export async function transferOwnershipAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    await (await settingsCaller()).team.transferOwnership({ memberId: field(form, "memberId") });
    revalidatePath("/settings/team");
    return { status: "ok", message: "Ownership transferred: you are an admin now." };
  });
}

/** Turns "require two-factor for owners and admins" on (`required` = "true") or off. */
export async function setRequireTwoFactorAction(_previous: FormState, form: FormData): Promise<FormState> {
  const required = field(form, "required") === "true";
  return runAction(async () => {
    await (await settingsCaller()).team.setRequireTwoFactor({ required });
    revalidatePath("/settings/team");
    return {
      status: "ok",
      message: required
        ? "Owners and admins without two-factor are now sent to the security page before any change."
        : "Two-factor is no longer required.",
    };
  });
}

/** Deletes the organisation once its slug is typed, then shows the settings (another organisation, or none). */
export async function deleteOrganisationAction(_previous: FormState, form: FormData): Promise<FormState> {
  const result = await runAction(async () => {
    await (await settingsCaller()).team.deleteOrganisation({ confirm: field(form, "confirm") });
    return { status: "ok" };
  });
  if (result.status === "ok") redirect("/settings");
  return result;
}
