import { redirect } from "next/navigation";
import { PasskeySignIn } from "../(settings)/_components/passkey-sign-in";
import { currentSettingsSession, safeNextPath } from "../(settings)/_lib/session";
import { SignInForm } from "./signin-form";

export const dynamic = "force-dynamic";
export const metadata = { title: "Sign in · MSP CRM API" };

/** Sign-in for organisation members: password (and a code with two-factor on) or a passkey. */
export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const next = safeNextPath(params.next);
  if ((await currentSettingsSession()).state === "member") redirect(next);
  return (
    <div className="signin">
      <h1>Sign in to the settings</h1>
      {params.signedOut ? (
        <p role="status" className="alert success">
          You are signed out.
        </p>
      ) : null}
      {params.reset ? (
        <p role="status" className="alert success">
          Your password is changed: sign in with it.
        </p>
      ) : null}
      <p className="muted">
        Manage your organisation's API keys, webhook endpoints, team and usage. Colleagues join by invitation from an
        owner or admin; <code>npm start</code> prints the demo login.
      </p>
      <SignInForm next={next} />
      <PasskeySignIn next={next} />
    </div>
  );
}
