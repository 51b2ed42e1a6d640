import { ROLE_DESCRIPTIONS, ROLE_NAMES } from "../../../../server/identity/roles";
import { rolesManagedByIdp } from "../../../../server/identity/sso/settings";
import { ActionForm } from "../../_components/action-form";
import { ConfirmAction } from "../../_components/confirm-action";
import { Time } from "../../_components/time";
import { requireMember, settingsCaller } from "../../_lib/session";
import {
  changeRoleAction,
  deleteOrganisationAction,
  inviteAction,
  removeMemberAction,
  resendInvitationAction,
  revokeInvitationAction,
  setRequireTwoFactorAction,
  transferOwnershipAction,
} from "./actions";

export const metadata = { title: "Team · Settings" };

const ASSIGNABLE = ["admin", "developer", "viewer"] as const;

/** What each role may do, as the server enforces it (server/identity/roles.ts). */
const TABLE: { what: string; roles: string[] }[] = [
  {
    what: "See keys (prefix, scopes, last use), endpoints, deliveries, usage",
    roles: ["owner", "admin", "developer", "viewer"],
  },
  { what: "Create, rotate, revoke test keys", roles: ["owner", "admin", "developer"] },
  { what: "Create, rotate, revoke live keys", roles: ["owner", "admin"] },
  { what: "Give a key admin:read (every read scope)", roles: ["owner", "admin"] },
  {
    what: "Create, edit, delete endpoints; rotate secrets; test events; redeliver",
    roles: ["owner", "admin", "developer"],
  },
  { what: "Invite, remove members, change roles (never to or from owner); audit trail", roles: ["owner", "admin"] },
  { what: "Transfer ownership, delete the organisation", roles: ["owner"] },
];

/**
 * The organisation's team: members with their roles (change, remove, transfer ownership), invitations (the link is
 * shown once; pending ones can be resent or revoked), the two-factor requirement and deletion. Controls are shown
 * only to the roles the server lets use them. When the identity provider's groups manage roles (a group → role map,
 * docs/api-contract.md §11.3) the page says so above the members: a role changed here lasts until the member's next
 * SSO sign-in.
 */
export default async function TeamPage() {
  const me = await requireMember("/settings/team");
  const caller = await settingsCaller();
  const canInvite = me.permissions["invitation:create"];
  const [members, invitations, managedByIdp] = await Promise.all([
    caller.team.members(),
    canInvite ? caller.team.invitations() : Promise.resolve([]),
    rolesManagedByIdp(me.org.id),
  ]);
  const canChangeRoles = me.permissions["member:update"];
  const canRemove = me.permissions["member:delete"];
  const canTransfer = me.permissions["organization:transfer"];
  const stepUpNote = me.recentlyAuthenticated ? null : (
    <p className="hint">
      Changing roles and transferring ownership need a sign-in within the last 15 minutes:{" "}
      <a href="/settings/confirm?next=%2Fsettings%2Fteam">confirm it's you</a> first.
    </p>
  );
  return (
    <>
      <h1>Team</h1>
      <p>
        Everyone here signs in with their own email and sees {me.org.name}'s settings as their role allows. You are{" "}
        <strong>{me.role}</strong>.
      </p>

      <section aria-labelledby="members-heading">
        <h2 id="members-heading">Members ({members.length})</h2>
        {managedByIdp ? (
          <p className="alert warning" data-testid="roles-managed-by-idp">
            Roles are managed by your identity provider's groups: changes here are replaced at each member's next
            sign-in. Change a role by changing the person's groups
            {me.permissions["organization:update"] ? (
              <>
                {" "}
                (<a href="/settings/security/sso">single sign-on settings</a>)
              </>
            ) : null}
            .
          </p>
        ) : null}
        {canChangeRoles ? stepUpNote : null}
        <ul className="key-list" data-testid="members">
          {members.map((member) => {
            const self = member.userId === me.user.id;
            const owner = member.role === "owner";
            return (
              <li key={member.id} className="card" data-testid="member-card" aria-labelledby={`member-${member.id}`}>
                <h3 id={`member-${member.id}`}>
                  {member.name} {self ? <span className="muted">(you)</span> : null}
                </h3>
                <p className="actions">
                  <span className="badge" data-testid="member-role">
                    {member.role}
                  </span>
                  {member.secondFactor ? <span className="badge ok">two-factor</span> : null}
                </p>
                <dl className="meta">
                  <dt>Email</dt>
                  <dd>{member.email}</dd>
                  <dt>Joined</dt>
                  <dd>
                    <Time value={member.joinedAt} />
                  </dd>
                </dl>
                {canChangeRoles && !owner ? (
                  <ActionForm
                    action={changeRoleAction}
                    submitLabel={`Change role of ${member.email}`}
                    buttonClassName="secondary"
                  >
                    <input type="hidden" name="memberId" value={member.id} />
                    <div className="field">
                      <label htmlFor={`role-${member.id}`}>Role of {member.email}</label>
                      <select id={`role-${member.id}`} name="role" defaultValue={member.role}>
                        {ASSIGNABLE.map((role) => (
                          <option key={role} value={role}>
                            {role}
                          </option>
                        ))}
                      </select>
                    </div>
                  </ActionForm>
                ) : null}
                {canTransfer && !owner ? (
                  <ConfirmAction
                    action={transferOwnershipAction}
                    summary="Transfer ownership…"
                    explanation={`${member.email} becomes an owner and you become an admin.`}
                    submitLabel={`Make ${member.email} the owner`}
                  >
                    <input type="hidden" name="memberId" value={member.id} />
                  </ConfirmAction>
                ) : null}
                {canRemove && (!owner || me.role === "owner") ? (
                  <ConfirmAction
                    action={removeMemberAction}
                    summary="Remove…"
                    explanation={`${member.email} loses access from their next page load and their pending invitations are withdrawn. Keys belong to the organisation: the ones they created keep working unless you revoke them here, and organisation service keys stay whatever you choose.`}
                    submitLabel={`Remove ${member.email}`}
                    danger
                  >
                    <input type="hidden" name="memberId" value={member.id} />
                    {member.keys.length > 0 ? (
                      <fieldset data-testid="member-keys">
                        <legend>
                          Keys {member.email} created that still work ({member.keys.length})
                        </legend>
                        <ul>
                          {member.keys.map((key) => (
                            <li key={key.id}>
                              {key.isTest ? "test" : "live"} key “{key.name}” <code>{key.prefix}…</code>
                              {key.serviceKey ? (
                                <span className="muted"> (organisation service key: stays)</span>
                              ) : null}
                            </li>
                          ))}
                        </ul>
                        {member.keys.some((key) => !key.serviceKey) ? (
                          <label className="choice">
                            <input type="checkbox" name="revokeKeys" defaultChecked />
                            <span className="choice-text">Revoke these keys too (organisation service keys stay)</span>
                          </label>
                        ) : (
                          <p className="hint">Organisation service keys stay when their creator is removed.</p>
                        )}
                      </fieldset>
                    ) : null}
                  </ConfirmAction>
                ) : null}
              </li>
            );
          })}
        </ul>
      </section>

      {canInvite ? (
        <section aria-labelledby="invite-heading">
          <h2 id="invite-heading">Invite a colleague</h2>
          <p>
            The invitation link is shown once, with a copy button, and works for 7 days. With mail configured it is also
            mailed. The invitee sets a name and password (or signs in, if the email has an account).
          </p>
          <ActionForm action={inviteAction} submitLabel="Send invitation" pendingLabel="Inviting…" className="stack">
            <div className="field">
              <label htmlFor="invite-email">Email</label>
              <input id="invite-email" name="email" type="email" required maxLength={254} autoComplete="off" />
            </div>
            <div className="field">
              <label htmlFor="invite-role">Role</label>
              <select id="invite-role" name="role" defaultValue="developer">
                {ASSIGNABLE.map((role) => (
                  <option key={role} value={role}>
                    {role}: {ROLE_DESCRIPTIONS[role]}
                  </option>
                ))}
              </select>
            </div>
          </ActionForm>

          <h3 id="pending-heading">Pending invitations ({invitations.length})</h3>
          {invitations.length === 0 ? (
            <p>No pending invitations.</p>
          ) : (
            <div className="table-wrap">
              <table data-testid="invitations" aria-labelledby="pending-heading">
                <thead>
                  <tr>
                    <th scope="col">Email</th>
                    <th scope="col">Role</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Invited by</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {invitations.map((invitation) => (
                    <tr key={invitation.email}>
                      <td>{invitation.email}</td>
                      <td>{invitation.role}</td>
                      <td className="nowrap">
                        {invitation.expired ? <span className="badge error">expired</span> : null}{" "}
                        <Time value={invitation.expiresAt} />
                      </td>
                      <td>{invitation.invitedBy}</td>
                      <td>
                        <ActionForm
                          action={resendInvitationAction}
                          submitLabel={`Resend to ${invitation.email}`}
                          buttonClassName="secondary"
                        >
                          <input type="hidden" name="email" value={invitation.email} />
                        </ActionForm>
                        {me.permissions["invitation:cancel"] ? (
                          <ActionForm
                            action={revokeInvitationAction}
                            submitLabel={`Revoke invitation of ${invitation.email}`}
                            buttonClassName="danger"
                          >
                            <input type="hidden" name="email" value={invitation.email} />
                          </ActionForm>
                        ) : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      ) : null}

      {me.permissions["organization:update"] ? (
        <section aria-labelledby="policy-heading">
          <h2 id="policy-heading">Two-factor requirement</h2>
          <p>
            {me.org.requireTwoFactor
              ? "Owners and admins must have an authenticator app or a passkey: without one they are sent to the security page before any change. Turning this off needs a sign-in or confirmation with your strongest factor within the last 15 minutes."
              : "Owners and admins may work without a second factor."}
          </p>
          <ActionForm
            action={setRequireTwoFactorAction}
            submitLabel={
              me.org.requireTwoFactor
                ? "Stop requiring two-factor for owners and admins"
                : "Require two-factor for owners and admins"
            }
            buttonClassName="secondary"
          >
            <input type="hidden" name="required" value={me.org.requireTwoFactor ? "false" : "true"} />
          </ActionForm>
        </section>
      ) : null}

      <section aria-labelledby="roles-heading">
        <h2 id="roles-heading">What each role may do</h2>
        <div className="table-wrap">
          <table data-testid="roles-table">
            <thead>
              <tr>
                <th scope="col">Action</th>
                {ROLE_NAMES.map((role) => (
                  <th scope="col" key={role}>
                    {role}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {TABLE.map((row) => (
                <tr key={row.what}>
                  <th scope="row">{row.what}</th>
                  {ROLE_NAMES.map((role) => (
                    <td key={role}>
                      <span aria-hidden="true">{row.roles.includes(role) ? "✓" : "—"}</span>
                      <span className="visually-hidden">{row.roles.includes(role) ? "yes" : "no"}</span>
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className="hint">
          Creating or rotating a key, revealing or rotating a webhook secret and changing roles also need a sign-in
          within the last 15 minutes (with the second factor, for members who have one). A key never carries a scope its
          creator's role could not use here. An organisation always keeps at least one owner.
        </p>
      </section>

      {me.permissions["organization:delete"] ? (
        <section aria-labelledby="delete-org-heading">
          <h2 id="delete-org-heading">Delete the organisation</h2>
          <ConfirmAction
            action={deleteOrganisationAction}
            summary="Delete this organisation…"
            explanation="Deletes every key, endpoint, record and member of the organisation. This cannot be undone."
            submitLabel="Delete the organisation"
            danger
          >
            <div className="field">
              <label htmlFor="confirm-slug">Type the organisation's slug ({me.org.slug}) to confirm</label>
              <input id="confirm-slug" name="confirm" type="text" required autoComplete="off" />
            </div>
          </ConfirmAction>
        </section>
      ) : null}
    </>
  );
}
