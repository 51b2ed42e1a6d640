import { signOut, switchOrganisationAction } from "./(settings)/_lib/auth-actions";
import { currentSettingsSession } from "./(settings)/_lib/session";

export const metadata = { title: "No access · MSP CRM API" };

/**
 * 403: signed in, but not (or no longer) a member of the organisation the page is about, or a role that may not see
 * it. Offers the user's other organisations, and signing out.
 */
export default async function Forbidden() {
  const state = await currentSettingsSession();
  const others = state.state === "no-membership" ? state.organisations : [];
  return (
    <div className="signin">
      <h1>You do not have access to this page</h1>
      <p data-testid="forbidden">
        {state.state === "no-membership" && state.ssoRequired
          ? `${state.ssoRequired.orgName} requires single sign-on: sign out, then sign in with your work email through its identity provider.`
          : state.state === "no-membership"
            ? "You are not a member of this organisation any more: an owner or admin removed you or it was deleted. Ask them to invite you again."
            : "Your role in this organisation does not let you see this page. Ask an owner or admin if you need it."}
      </p>
      {others.length > 0 ? (
        <form action={switchOrganisationAction} className="stack">
          <div className="field">
            <label htmlFor="forbidden-org">Open another of your organisations</label>
            <select id="forbidden-org" name="orgId">
              {others.map((org) => (
                <option key={org.id} value={org.id}>
                  {org.name}
                </option>
              ))}
            </select>
          </div>
          <div>
            <button type="submit">Open organisation</button>
          </div>
        </form>
      ) : null}
      {state.state !== "signed-out" ? (
        <form action={signOut}>
          <button type="submit" className="secondary">
            Sign out
          </button>
        </form>
      ) : (
        <p>
          <a href="/signin">Sign in</a>
        </p>
      )}
    </div>
  );
}
