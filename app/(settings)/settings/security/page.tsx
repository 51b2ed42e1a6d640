import { ActionForm } from "../../_components/action-form";
import { Address } from "../../_components/address";
import { ConfirmAction } from "../../_components/confirm-action";
import { Time } from "../../_components/time";
import { requireMember, settingsCaller } from "../../_lib/session";
import { disableTotpAction, removePasskeyAction, replaceBackupCodesAction, revokeSessionAction } from "./actions";
import { AddPasskey } from "./add-passkey";
import { TotpSetup } from "./totp-setup";

export const metadata = { title: "Security · Settings" };

/** How the page names each strongest factor when it asks for it. */
const CONFIRM_WITH = {
  passkey: "your passkey",
  "authenticator app": "a code from your authenticator app",
  password: "your password",
} as const;

/**
 * The member's own sign-in security: an authenticator app (TOTP with backup codes), passkeys, and the sessions
 * signed in (device, address, last seen) with revoke. Reached first when the organisation requires two-factor of an
 * owner or admin whose session did not prove one: they set one up here, or go on to confirm with the one they have.
 * Setting up, replacing or removing a factor is offered only after a sign-in or confirmation with the member's
 * strongest factor within 15 minutes; otherwise the page links to the confirmation first.
 */
export default async function SecurityPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const me = await requireMember("/settings/security");
  const params = await searchParams;
  const overview = await (await settingsCaller()).security.overview();
  return (
    <>
      <h1>Security</h1>
      {me.secondFactorNeeded === "confirm" ? (
        <p role="alert" className="alert warning" data-testid="two-factor-required">
          {me.org.name} requires two-factor authentication for owners and admins, and this session signed in with a
          password only:{" "}
          <a href="/settings/confirm?next=%2Fsettings">
            confirm with your {me.confirmWith === "code" ? "authenticator app" : "passkey"}
          </a>{" "}
          before making any change.
        </p>
      ) : params.required || me.mustSetUpSecondFactor ? (
        <p role="alert" className="alert warning" data-testid="two-factor-required">
          {me.org.name} requires two-factor authentication for owners and admins: set up an authenticator app or a
          passkey below before making any change.
        </p>
      ) : null}
      {me.mayChangeSignInFactors ? null : (
        <p className="alert warning" data-testid="factors-locked">
          Setting up, replacing or removing a way to sign in needs a sign-in or confirmation with{" "}
          {CONFIRM_WITH[me.strongestFactor]} within the last 15 minutes:{" "}
          <a href="/settings/confirm?next=%2Fsettings%2Fsecurity">confirm it's you</a> first.
        </p>
      )}

      <section aria-labelledby="totp-heading">
        <h2 id="totp-heading">Authenticator app</h2>
        {overview.twoFactorEnabled ? (
          <>
            <p>
              <span className="badge ok" data-testid="totp-status">
                on
              </span>{" "}
              Signing in asks for a code from your app (or one of your backup codes).
            </p>
            {me.secondFactor.session === null ? (
              <p className="hint" data-testid="session-without-factor">
                This session has not proved a code (setting the app up does not count): it is not a two-factor session.
                Sign out and sign in again with a code
                {me.secondFactorNeeded === "confirm" ? ", or confirm with one as asked above," : ""} to make one.
              </p>
            ) : null}
            {me.mayChangeSignInFactors ? (
              <>
                <ConfirmAction
                  action={replaceBackupCodesAction}
                  summary="New backup codes…"
                  explanation="Ten new codes replace the old ones, which stop working."
                  submitLabel="Make new backup codes"
                >
                  <div className="field">
                    <label htmlFor="backup-password">Your password</label>
                    <input
                      id="backup-password"
                      name="password"
                      type="password"
                      autoComplete="current-password"
                      required
                    />
                  </div>
                </ConfirmAction>
                <ConfirmAction
                  action={disableTotpAction}
                  summary="Turn off two-factor…"
                  explanation="Signing in will no longer ask for a code from your app."
                  submitLabel="Turn off two-factor"
                  danger
                >
                  <div className="field">
                    <label htmlFor="disable-password">Your password</label>
                    <input
                      id="disable-password"
                      name="password"
                      type="password"
                      autoComplete="current-password"
                      required
                    />
                  </div>
                </ConfirmAction>
              </>
            ) : null}
          </>
        ) : (
          <>
            <p>
              <span className="badge" data-testid="totp-status">
                off
              </span>{" "}
              {overview.totpPending
                ? "A set-up was started but not confirmed with a code: start again to see a new QR code."
                : "Add a code from an authenticator app (1Password, Google Authenticator, …) to every sign-in."}
            </p>
            {me.mayChangeSignInFactors ? <TotpSetup /> : null}
          </>
        )}
      </section>

      <section aria-labelledby="passkeys-heading">
        <h2 id="passkeys-heading">Passkeys ({overview.passkeys.length})</h2>
        <p>Sign in with your device's fingerprint, face or security key instead of a password.</p>
        {overview.passkeys.length > 0 ? (
          <ul className="key-list" data-testid="passkeys">
            {overview.passkeys.map((passkey) => (
              <li key={passkey.id} className="card">
                <h3>{passkey.name}</h3>
                <dl className="meta">
                  <dt>Added</dt>
                  <dd>
                    <Time value={passkey.createdAt} />
                  </dd>
                  <dt>Kind</dt>
                  <dd>{passkey.deviceType === "multiDevice" ? "synced" : "this device only"}</dd>
                </dl>
                {me.mayChangeSignInFactors ? (
                  <ActionForm
                    action={removePasskeyAction}
                    submitLabel={`Remove passkey ${passkey.name}`}
                    buttonClassName="danger"
                  >
                    <input type="hidden" name="id" value={passkey.id} />
                  </ActionForm>
                ) : null}
              </li>
            ))}
          </ul>
        ) : null}
        {me.mayChangeSignInFactors ? <AddPasskey /> : null}
      </section>

      <section aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">Where you are signed in ({overview.sessions.length})</h2>
        <div className="table-wrap">
          <table data-testid="sessions">
            <thead>
              <tr>
                <th scope="col">Device</th>
                <th scope="col">Address</th>
                <th scope="col">Signed in</th>
                <th scope="col">Last seen</th>
                <th scope="col">Ends</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {overview.sessions.map((session) => (
                <tr key={session.id}>
                  <td>
                    {session.device} {session.current ? <span className="badge ok">this browser</span> : null}
                  </td>
                  <td>
                    <Address value={session.ipAddress} />
                  </td>
                  <td className="nowrap">
                    <Time value={session.createdAt} />
                  </td>
                  <td className="nowrap">
                    <Time value={session.lastSeenAt} />
                  </td>
                  <td className="nowrap">
                    <Time value={session.expiresAt} />
                  </td>
                  <td>
                    {session.current ? (
                      <span className="muted">use Sign out</span>
                    ) : (
                      <ActionForm
                        action={revokeSessionAction}
                        submitLabel="Sign out this session"
                        buttonClassName="secondary"
                      >
                        <input type="hidden" name="id" value={session.id} />
                      </ActionForm>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </>
  );
}
