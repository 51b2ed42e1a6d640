import { organisationsOf } from "../../../../server/identity/session";
import { settingsErrorMessage } from "../../../../server/settings/trpc";
import { SCOPE_OPTIONS, scopeImplication } from "../../_lib/scopes";
import { requireMember, settingsCaller } from "../../_lib/session";
import { connectAction, declineAction } from "./actions";

export const dynamic = "force-dynamic";
export const metadata = { title: "Connect an app · Settings" };

/** The authorization request's own query: the page's parameters without the message this page adds. */
function oauthQueryOf(params: Record<string, string | string[] | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (name === "error" || value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) query.append(name, one);
  }
  // `+` is not among the characters a `next` path may hold (safeNextPath).
  return query.toString().replace(/\+/g, "%20");
}

/**
 * The consent page of OAuth (docs/api-contract.md §10.6): an MCP client such as Claude.ai sent the member here through
 * the authorization endpoint. It names the client and where it sends the browser back, lets the member pick one of
 * their organisations, the mode and the scopes (those the client asked for, never beyond what the member's role may
 * give a key), and asks for a sign-in within 15 minutes as creating a key does. Allow creates the connection (a key
 * nobody sees) and returns to the client with the code; Deny returns with `access_denied`.
 */
export default async function ConnectPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const oauthQuery = oauthQueryOf(params);
  const here = `/settings/connect?${oauthQuery}`;
  const me = await requireMember(here);
  let request: Awaited<ReturnType<Awaited<ReturnType<typeof settingsCaller>>["oauth"]["request"]>>;
  try {
    request = await (await settingsCaller()).oauth.request({ oauthQuery });
  } catch (error) {
    return (
      <>
        <h1>Connect an app</h1>
        <p className="alert error" role="alert">
          {settingsErrorMessage(error)}
        </p>
      </>
    );
  }
  const organisations = await organisationsOf(me.user.id);
  const error = typeof params.error === "string" ? params.error : null;
  const options = SCOPE_OPTIONS.filter((option) => request.scopes.includes(option.scope));
  return (
    <>
      <h1>Connect {request.clientName}</h1>
      {error ? (
        <p className="alert error" role="alert">
          {error}
        </p>
      ) : null}
      <p>
        <strong>{request.clientName}</strong> wants to use the CRM's MCP tools as you. It will send you back to{" "}
        <code>{request.redirectHost}</code>. The connection acts as an API key of the organisation you choose, with the
        scopes you choose; it is listed on the API keys page with its last use, and revoking it there stops it at once.
        {request.offline ? " It asked to stay connected (a refresh token) until you revoke it." : null}
      </p>
      {me.recentlyAuthenticated ? null : (
        <p className="hint">
          Connecting an app needs a sign-in within the last 15 minutes, as creating a key does:{" "}
          <a href={`/settings/confirm?next=${encodeURIComponent(here)}`}>confirm it's you</a> first.
        </p>
      )}
      <form action={connectAction} className="stack">
        <input type="hidden" name="oauthQuery" value={oauthQuery} />
        <fieldset>
          <legend>Organisation</legend>
          {organisations.map((org) => (
            <label key={org.id} className="choice">
              <input type="radio" name="orgId" value={org.id} defaultChecked={org.id === me.org.id} />
              <span className="choice-text">{org.name}</span>
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Mode</legend>
          <label className="choice">
            <input
              type="radio"
              name="mode"
              value="live"
              defaultChecked={me.permissions["apiKey:manageLive"]}
              disabled={!me.permissions["apiKey:manageLive"]}
            />
            <span className="choice-text">Live data (owners and admins)</span>
          </label>
          <label className="choice">
            <input type="radio" name="mode" value="test" defaultChecked={!me.permissions["apiKey:manageLive"]} />
            <span className="choice-text">Test data</span>
          </label>
        </fieldset>
        <fieldset>
          <legend>Scopes</legend>
          {options.map((option) => (
            <label key={option.scope} className="choice">
              <input type="checkbox" name="scopes" value={option.scope} defaultChecked />
              <span className="choice-text">
                <code>{option.scope}</code> {option.grants}
                {scopeImplication(option.scope) ? (
                  <span className="muted"> (+ {scopeImplication(option.scope)})</span>
                ) : null}
              </span>
            </label>
          ))}
          <p className="hint">
            Scopes your role ({me.role}) cannot give a key are refused; the switch of organisation applies to these
            settings too.
          </p>
        </fieldset>
        <p className="actions">
          <button type="submit">Allow {request.clientName}</button>
        </p>
      </form>
      <form action={declineAction}>
        <input type="hidden" name="oauthQuery" value={oauthQuery} />
        <button type="submit" className="secondary">
          Deny
        </button>
      </form>
    </>
  );
}
