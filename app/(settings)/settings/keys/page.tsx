import { permissionForScope } from "../../../../server/identity/roles";
import { ConfirmAction } from "../../_components/confirm-action";
import { Time } from "../../_components/time";
import { formatRelativeFuture } from "../../_lib/format";
import { DEPRECATED_SCOPE_OPTIONS, grantsNothingNote, SCOPE_OPTIONS, scopeImplication } from "../../_lib/scopes";
import { requireMember, settingsCaller } from "../../_lib/session";
import { createKeyAction, revokeConnectionAction, revokeKeyAction, rotateKeyAction } from "./actions";
import { CreateKeyForm } from "./create-key-form";

export const metadata = { title: "API keys · Settings" };

/**
 * The organisation's API keys (docs/api-contract.md §5): create (shown once), list with their creator, revoke, rotate.
 * Every role sees them; the controls a role may not use (test keys: owner, admin, developer; live keys: owner, admin;
 * scopes beyond the role, such as `admin:read` for a developer) are not offered, and the server refuses them anyway.
 * Creating and rotating ask for a recent sign-in. Keys belong to the organisation, not to their creator.
 */
export default async function KeysPage() {
  const me = await requireMember("/settings/keys");
  const manageTest = me.permissions["apiKey:manageTest"];
  const manageLive = me.permissions["apiKey:manageLive"];
  const caller = await settingsCaller();
  // A connected app's key is listed with its app, not among the keys: nobody holds it, and it is not rotated.
  const keys = (await caller.apiKeys.list()).filter((key) => key.oauthClientId === null);
  const connections = await caller.oauth.connections();
  const now = Date.now();
  const beyondRole = SCOPE_OPTIONS.map((option) => option.scope).filter((scope) => {
    const needed = permissionForScope(scope);
    return needed !== null && !me.permissions[needed];
  });
  const confirmFirst = me.recentlyAuthenticated ? null : (
    <p className="hint" data-testid="keys-step-up">
      Creating or rotating a key needs a sign-in within the last 15 minutes:{" "}
      <a href="/settings/confirm?next=%2Fsettings%2Fkeys">confirm it's you</a> first.
    </p>
  );
  return (
    <>
      <h1>API keys</h1>
      <p>
        Every API request carries <code>Authorization: Bearer &lt;key&gt;</code>. Keys are stored as SHA-256 hashes: the
        key itself is shown once, when it is created or rotated. A lost key must be rotated. Rotating keeps the old key
        working for 24 hours so you can roll the new one out; revoking stops a key at once. Keys belong to the
        organisation: one keeps working when the member who created it leaves, unless it is revoked with the removal; an
        organisation service key is never revoked that way, nor when the directory deprovisions its creator.
      </p>

      {manageTest ? (
        <section aria-labelledby="create-key-heading">
          <h2 id="create-key-heading">Create a key</h2>
          {confirmFirst}
          <CreateKeyForm
            action={createKeyAction}
            scopes={SCOPE_OPTIONS}
            deprecated={DEPRECATED_SCOPE_OPTIONS}
            live={manageLive ? "allowed" : "not-allowed"}
            beyondRole={beyondRole}
          />
        </section>
      ) : (
        <p className="muted" data-testid="read-only-note">
          Your role ({me.role}) can see keys (prefix, scopes, last use); owners, admins and developers create them.
        </p>
      )}

      <section aria-labelledby="connections-heading">
        <h2 id="connections-heading">Connected apps ({connections.length})</h2>
        <p className="muted">
          AI agents such as Claude.ai or ChatGPT connect to <code>/mcp</code> with OAuth: a member signs in, chooses
          this organisation and the scopes, and the app then acts as a key nobody sees. Revoking stops it within a
          second.
        </p>
        {connections.length === 0 ? null : (
          <ul className="key-list">
            {connections.map((connection) => (
              <li key={connection.keyId} className="card" data-testid="connection-card">
                <h3>{connection.clientName}</h3>
                <p className="actions">
                  <span className={`badge ${connection.isTest ? "test" : "live"}`}>
                    {connection.isTest ? "test" : "live"}
                  </span>
                </p>
                <dl className="meta">
                  <dt>Returns to</dt>
                  <dd>{connection.redirectHosts.join(", ")}</dd>
                  <dt>Scopes</dt>
                  <dd>{connection.scopes.join(", ")}</dd>
                  <dt>Connected</dt>
                  <dd>
                    <Time value={connection.createdAt} />
                    {connection.createdBy ? ` by ${connection.createdBy.email}` : null}
                  </dd>
                  <dt>Last used</dt>
                  <dd>
                    {connection.lastUsedAt ? (
                      <Time value={connection.lastUsedAt} />
                    ) : (
                      <span className="muted">never</span>
                    )}
                  </dd>
                </dl>
                <ConfirmAction
                  action={revokeConnectionAction}
                  summary="Revoke…"
                  explanation="The app's requests get 401 unauthorized from now on; it must be connected again."
                  submitLabel={`Revoke “${connection.clientName}”`}
                  pendingLabel="Revoking…"
                  danger
                  showButton={connection.isTest ? manageTest : manageLive}
                >
                  <input type="hidden" name="keyId" value={connection.keyId} />
                </ConfirmAction>
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">Your keys ({keys.length})</h2>
        {keys.length === 0 ? (
          <p>No keys yet. Create a test key above to try the API.</p>
        ) : (
          <ul className="key-list">
            {keys.map((key) => {
              const expired = key.expiresAt !== null && key.expiresAt.getTime() <= now;
              const active = !key.revokedAt && !expired;
              const mayChange = key.isTest ? manageTest : manageLive;
              return (
                <li key={key.id} className="card" data-testid="key-card" aria-labelledby={`key-${key.id}`}>
                  <h3 id={`key-${key.id}`}>{key.name}</h3>
                  <p className="actions">
                    <span className={`badge ${key.isTest ? "test" : "live"}`}>{key.isTest ? "test" : "live"}</span>
                    {key.serviceKey ? (
                      <span
                        className="badge"
                        data-testid="service-key"
                        title="Keeps working when its creator leaves the organisation"
                      >
                        service key
                      </span>
                    ) : null}
                    {key.revokedAt ? (
                      <span className="badge error">revoked</span>
                    ) : expired ? (
                      <span className="badge error">expired</span>
                    ) : key.expiresAt ? (
                      <span className="badge warn">rotated: expires {formatRelativeFuture(key.expiresAt)}</span>
                    ) : (
                      <span className="badge ok">active</span>
                    )}
                  </p>
                  <dl className="meta">
                    <dt>Prefix</dt>
                    <dd>
                      <code>{key.prefix}…</code>
                    </dd>
                    <dt>Scopes</dt>
                    <dd>
                      <ul className="scope-list">
                        {key.scopes.map((scope) => {
                          const note = grantsNothingNote(scope);
                          const implies = scopeImplication(scope);
                          return (
                            <li key={scope}>
                              <code>{scope}</code>
                              {implies ? <span className="muted"> (+ {implies})</span> : null}
                              {note ? <span className="muted"> (grants nothing)</span> : null}
                            </li>
                          );
                        })}
                      </ul>
                    </dd>
                    <dt>Created</dt>
                    <dd>
                      <Time value={key.createdAt} />
                    </dd>
                    <dt>Last used</dt>
                    <dd>{key.lastUsedAt ? <Time value={key.lastUsedAt} /> : <span className="muted">never</span>}</dd>
                    <dt>Created by</dt>
                    <dd data-testid="key-creator">
                      {key.createdBy ? key.createdBy.email : <span className="muted">operator command</span>}
                    </dd>
                    {key.revokedAt ? (
                      <>
                        <dt>Revoked</dt>
                        <dd>
                          <Time value={key.revokedAt} />
                        </dd>
                      </>
                    ) : null}
                    {key.expiresAt ? (
                      <>
                        <dt>{expired ? "Expired" : "Expires"}</dt>
                        <dd>
                          <Time value={key.expiresAt} />
                        </dd>
                      </>
                    ) : null}
                  </dl>
                  <ConfirmAction
                    action={rotateKeyAction}
                    summary="Rotate…"
                    explanation="Creates a new key with the same name, scopes and mode and shows it once. This key keeps working for 24 hours."
                    submitLabel={`Rotate “${key.name}”`}
                    pendingLabel="Rotating…"
                    showButton={mayChange && active && !key.expiresAt}
                  >
                    <input type="hidden" name="id" value={key.id} />
                  </ConfirmAction>
                  <ConfirmAction
                    action={revokeKeyAction}
                    summary="Revoke…"
                    explanation="Requests with this key get 401 unauthorized from now on. This cannot be undone."
                    submitLabel={`Revoke “${key.name}”`}
                    pendingLabel="Revoking…"
                    danger
                    showButton={mayChange && active}
                  >
                    <input type="hidden" name="id" value={key.id} />
                  </ConfirmAction>
                </li>
              );
            })}
          </ul>
        )}
      </section>
    </>
  );
}
