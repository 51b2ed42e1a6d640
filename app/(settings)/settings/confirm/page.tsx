import { ActionForm } from "../../_components/action-form";
import { PasskeySignIn } from "../../_components/passkey-sign-in";
import { requireMember, safeNextPath } from "../../_lib/session";
import { confirmAction } from "./actions";

export const metadata = { title: "Confirm it's you · Settings" };

/**
 * Step-up: creating or rotating a key, revealing or rotating a webhook secret, changing roles, transferring
 * ownership and deleting the organisation need a sign-in within the last 15 minutes, with the second factor when the
 * member has one; setting up, replacing or removing a factor and turning off the organisation's two-factor requirement
 * need it with the member's strongest factor (a passkey, else the app, else the password). Here the member confirms
 * with a code from their authenticator app or a backup code (with two-factor on), a passkey (with passkeys: a password
 * alone is not enough then), or their password (with neither), and goes back to `next`. It also completes a session
 * that signed in with a password only when the organisation requires two-factor.
 */
export default async function ConfirmPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const me = await requireMember("/settings/confirm");
  const next = safeNextPath((await searchParams).next);
  const intro = {
    code: "Enter a code from your authenticator app, or one of your backup codes.",
    passkey: "You have a passkey: confirm with it (a password alone is not enough).",
    password: "Enter your password.",
  }[me.confirmWith];
  return (
    <div className="signin">
      <h1>Confirm it's you</h1>
      <p>The change you asked for needs a sign-in within the last 15 minutes. {intro}</p>
      {me.confirmWith === "code" && me.secondFactor.passkeys > 0 ? (
        <p className="hint">
          Setting up, replacing or removing a way to sign in, and turning off the two-factor requirement, need your
          passkey: a code is not enough for those.
        </p>
      ) : null}
      {me.confirmWith === "code" ? (
        <ActionForm action={confirmAction} submitLabel="Confirm and continue" className="stack">
          <input type="hidden" name="next" value={next} />
          <div className="field">
            <label htmlFor="confirm-code">Code from your authenticator app</label>
            <input
              id="confirm-code"
              name="code"
              type="text"
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              maxLength={20}
            />
          </div>
          <label className="choice">
            <input type="checkbox" name="backup" />
            <span className="choice-text">It is a backup code (each works once)</span>
          </label>
        </ActionForm>
      ) : me.confirmWith === "password" ? (
        <ActionForm action={confirmAction} submitLabel="Confirm and continue" className="stack">
          <input type="hidden" name="next" value={next} />
          <div className="field">
            <label htmlFor="confirm-password">Your password</label>
            <input id="confirm-password" name="password" type="password" autoComplete="current-password" required />
          </div>
        </ActionForm>
      ) : null}
      {me.secondFactor.passkeys > 0 ? <PasskeySignIn next={next} label="Confirm with a passkey" /> : null}
      <p>
        <a href={next}>Cancel</a>
      </p>
    </div>
  );
}
