import { ActionForm } from "../../_components/action-form";
import { PasskeySignIn } from "../../_components/passkey-sign-in";
import { requireMember, safeNextPath } from "../../_lib/session";
import { confirmAction } from "./actions";

export const metadata = { title: "Confirm it's you · Settings" };

/**
 * Step-up: creating or rotating a live key, revealing or rotating a webhook secret, changing roles, transferring
 * ownership, deleting the organisation and adding a passkey need a sign-in within the last 15 minutes. Here the member
 * confirms with a code from their authenticator app (with two-factor on), their password (without), or a passkey,
 * and goes back to `next`.
 */
export default async function ConfirmPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const me = await requireMember("/settings/confirm");
  const next = safeNextPath((await searchParams).next);
  return (
    <div className="signin">
      <h1>Confirm it's you</h1>
      <p>
        The change you asked for needs a sign-in within the last 15 minutes.{" "}
        {me.secondFactor.totp ? "Enter a code from your authenticator app." : "Enter your password."}
      </p>
      <ActionForm action={confirmAction} submitLabel="Confirm and continue" className="stack">
        <input type="hidden" name="next" value={next} />
        {me.secondFactor.totp ? (
          <div className="field">
            <label htmlFor="confirm-code">Code from your authenticator app</label>
            <input
              id="confirm-code"
              name="code"
              type="text"
              inputMode="numeric"
              autoComplete="one-time-code"
              required
            />
          </div>
        ) : (
          <div className="field">
            <label htmlFor="confirm-password">Your password</label>
            <input id="confirm-password" name="password" type="password" autoComplete="current-password" required />
          </div>
        )}
      </ActionForm>
      {me.secondFactor.passkeys > 0 ? <PasskeySignIn next={next} label="Confirm with a passkey" /> : null}
      <p>
        <a href={next}>Cancel</a>
      </p>
    </div>
  );
}
