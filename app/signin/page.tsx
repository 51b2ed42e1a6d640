import { redirect } from "next/navigation";
import { OAUTH_CONSENT_PAGE } from "../../server/identity/oauth/provider";
import { PasskeySignIn } from "../(settings)/_components/passkey-sign-in";
import { currentSettingsSession, safeNextPath } from "../(settings)/_lib/session";
import { SignInForm } from "./signin-form";

export const dynamic = "force-dynamic";
export const metadata = { title: "Sign in · MSP CRM API" };

/**
 * Where an OAuth authorization continues after sign-in (docs/api-contract.md §10.6): the authorization endpoint sent the
 * browser here with its signed request (`sig` among the parameters), which the consent page takes as it is.
 */
function oauthNext(params: Record<string, string | string[] | undefined>): string | null {
  if (typeof params.sig !== "string") return null;
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || name === "next") continue;
    for (const one of Array.isArray(value) ? value : [value]) query.append(name, one);
  }
  // `+` is not among the characters a `next` path may hold (safeNextPath).
  return `${OAUTH_CONSENT_PAGE}?${query.toString().replace(/\+/g, "%20")}`;
}

/** Sign-in for organisation members: password (and a code with two-factor on) or a passkey. */
export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const next = safeNextPath(oauthNext(params) ?? params.next);
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
