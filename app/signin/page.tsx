import { redirect } from "next/navigation";
import { OAUTH_CONSENT_PAGE } from "../../server/identity/oauth/provider";
import { SSO_REFUSALS } from "../../server/identity/sso/sign-in";
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

/** The words of an SSO refusal the identity provider's callback sent back as `?error=<code>`, or null. */
function ssoRefusal(error: string | string[] | undefined): string | null {
  if (typeof error !== "string" || !Object.hasOwn(SSO_REFUSALS, error)) return null;
  return SSO_REFUSALS[error as keyof typeof SSO_REFUSALS];
}

/**
 * Sign-in for organisation members, email first (docs/api-contract.md §11.4): single sign-on for emails of a verified
 * domain whose organisation uses it, otherwise password (and a code with two-factor on) or a passkey. A refused SSO
 * sign-in comes back with `?error=<code>`, shown in the words of `SSO_REFUSALS`.
 */
export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const next = safeNextPath(oauthNext(params) ?? params.next);
  if ((await currentSettingsSession()).state === "member") redirect(next);
  const refusal = ssoRefusal(params.error);
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
        Manage your organisation's API keys, webhook endpoints, team and usage. Enter your email: if your organisation
        uses single sign-on you continue at its identity provider, otherwise with your password or a passkey. Colleagues
        join by invitation from an owner or admin; <code>npm start</code> prints the demo login.
      </p>
      {refusal ? (
        <p role="alert" className="alert error" data-testid="sso-refusal">
          Single sign-on refused ({String(params.error)}): {refusal}.
        </p>
      ) : null}
      <SignInForm next={next} passkey={<PasskeySignIn next={next} />} />
    </div>
  );
}
