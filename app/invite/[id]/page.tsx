import { notFound } from "next/navigation";
import { getInvitationPage } from "../../../server/identity/team/accept-invitation";
import { ActionForm } from "../../(settings)/_components/action-form";
import { Time } from "../../(settings)/_components/time";
import { signOut } from "../../(settings)/_lib/auth-actions";
import { currentSettingsSession } from "../../(settings)/_lib/session";
import { acceptSignedInAction } from "./actions";
import { NewAccountForm } from "./new-account-form";

export const dynamic = "force-dynamic";
export const metadata = { title: "Invitation · MSP CRM API" };

const WHY: Record<string, string> = {
  expired: "This invitation has expired.",
  accepted: "This invitation was already accepted.",
  canceled: "This invitation was revoked.",
  rejected: "This invitation was declined.",
};

/**
 * An invitation link (`/invite/<id>`): the organisation, who invited and the role; the invitee sets a name and
 * password (or signs in, when the email already has an account) and lands in `/settings`. A link that is not pending
 * says why, and an unknown one is 404.
 */
export default async function InvitationPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const invitation = await getInvitationPage(id);
  if (!invitation) notFound();
  const state = await currentSettingsSession();
  const signedInEmail = state.state === "signed-out" ? null : state.user.email;
  const path = `/invite/${encodeURIComponent(id)}`;
  return (
    <div className="signin">
      <h1>Join {invitation.orgName}</h1>
      <p data-testid="invitation-summary">
        {invitation.invitedBy.name} ({invitation.invitedBy.email}) invited <strong>{invitation.email}</strong> to{" "}
        <strong>{invitation.orgName}</strong> as <strong data-testid="invitation-role">{invitation.role}</strong>.
      </p>
      {invitation.status !== "pending" ? (
        <p role="alert" className="alert error">
          {WHY[invitation.status]} Ask {invitation.invitedBy.email} for a new link.
        </p>
      ) : signedInEmail && signedInEmail !== invitation.email ? (
        <>
          <p className="alert warning">
            You are signed in as {signedInEmail}; this invitation is for {invitation.email}. Sign out, then open the
            link again.
          </p>
          <form action={signOut}>
            <button type="submit" className="secondary">
              Sign out
            </button>
          </form>
        </>
      ) : signedInEmail ? (
        <ActionForm action={acceptSignedInAction} submitLabel={`Join ${invitation.orgName}`}>
          <input type="hidden" name="invitationId" value={invitation.id} />
        </ActionForm>
      ) : invitation.hasAccount ? (
        <p>
          {invitation.email} already has an account: <a href={`/signin?next=${encodeURIComponent(path)}`}>sign in</a> to
          accept.
        </p>
      ) : (
        <NewAccountForm invitationId={invitation.id} email={invitation.email} />
      )}
      {invitation.status === "pending" ? (
        <p className="muted">
          The link works until <Time value={invitation.expiresAt} />.
        </p>
      ) : null}
    </div>
  );
}
