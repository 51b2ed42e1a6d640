import { ActionForm } from "../(settings)/_components/action-form";
import { resetPasswordAction } from "./actions";

export const dynamic = "force-dynamic";
export const metadata = { title: "Set a new password · MSP CRM API" };

/**
 * A password-reset link (`/reset-password?token=…`, from `npm run admin -- reset-password`, valid once for an hour):
 * choose a new password; every session of the user ends and they sign in with it.
 */
export default async function ResetPasswordPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const token = (await searchParams).token;
  return (
    <div className="signin">
      <h1>Set a new password</h1>
      {typeof token !== "string" || !token ? (
        <p role="alert" className="alert error">
          This link has no reset token: ask your operator for a new one.
        </p>
      ) : (
        <ActionForm action={resetPasswordAction} submitLabel="Set password" className="stack">
          <input type="hidden" name="token" value={token} />
          <div className="field">
            <label htmlFor="new-password">New password</label>
            <input
              id="new-password"
              name="password"
              type="password"
              required
              minLength={10}
              maxLength={128}
              autoComplete="new-password"
            />
          </div>
        </ActionForm>
      )}
    </div>
  );
}
