import { redirect } from "next/navigation";
import { currentSession, safeNextPath } from "../(settings)/_lib/session";
import { SignInForm } from "./signin-form";

export const dynamic = "force-dynamic";
export const metadata = { title: "Sign in · MSP CRM API" };

/** Sign-in for organisation users (issue #6); a signed-in user goes straight to the settings. */
export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const next = safeNextPath(params.next);
  if (await currentSession()) redirect(next);
  return (
    <div className="signin">
      <h1>Sign in to the settings</h1>
      {params.signedOut ? (
        <p role="status" className="alert success">
          You are signed out.
        </p>
      ) : null}
      <p className="muted">
        Manage your organisation's API keys, webhook endpoints and usage. Users are created by an operator with{" "}
        <code>npm run admin -- create-user</code>; <code>npm start</code> prints the demo login.
      </p>
      <SignInForm next={next} />
    </div>
  );
}
