"use client";

import { useActionState } from "react";
import { FormResult } from "../../../_components/form-result";
import { type FormState, IDLE } from "../../../_lib/form-state";

/**
 * The OIDC connection form (docs/api-contract.md §11.1): issuer, client id, client secret and extra scopes. A refused
 * save (discovery failed, an untrusted issuer) keeps what was typed but the secret, so only the field at fault needs
 * changing; `current` fills the issuer and client id of a connected OIDC provider.
 */
export function OidcForm({
  action,
  current,
}: {
  action: (state: FormState, form: FormData) => Promise<FormState>;
  current: { issuer: string; clientId: string } | null;
}) {
  const [state, formAction, pending] = useActionState(action, IDLE);
  const kept = state.status === "error" ? (state.values ?? {}) : {};
  const value = (name: string, fallback: string) => (typeof kept[name] === "string" ? kept[name] : fallback);
  return (
    <form action={formAction} className="stack">
      <div className="field">
        <label htmlFor="oidc-issuer">Issuer URL</label>
        <input
          id="oidc-issuer"
          name="issuer"
          type="url"
          required
          maxLength={2048}
          placeholder="https://login.example.com"
          defaultValue={value("issuer", current?.issuer ?? "")}
          aria-describedby="oidc-issuer-hint"
        />
        <p id="oidc-issuer-hint" className="hint">
          Exactly as the provider's discovery document states it; its endpoints are read from
          <code> &lt;issuer&gt;/.well-known/openid-configuration</code>.
        </p>
      </div>
      <div className="field">
        <label htmlFor="oidc-client-id">Client ID</label>
        <input
          id="oidc-client-id"
          name="clientId"
          type="text"
          required
          maxLength={512}
          autoComplete="off"
          defaultValue={value("clientId", current?.clientId ?? "")}
        />
      </div>
      <div className="field">
        <label htmlFor="oidc-client-secret">Client secret</label>
        <input
          id="oidc-client-secret"
          name="clientSecret"
          type="password"
          required
          maxLength={2048}
          autoComplete="new-password"
          aria-describedby="oidc-secret-hint"
        />
        <p id="oidc-secret-hint" className="hint">
          Stored for the sign-ins and never shown again: enter it anew to replace the configuration.
        </p>
      </div>
      <div className="field">
        <label htmlFor="oidc-scopes">Extra scopes</label>
        <input
          id="oidc-scopes"
          name="extraScopes"
          type="text"
          maxLength={1000}
          autoComplete="off"
          placeholder="groups"
          defaultValue={value("extraScopes", "")}
          aria-describedby="oidc-scopes-hint"
        />
        <p id="oidc-scopes-hint" className="hint">
          Beyond <code>openid email profile</code>, separated by spaces: <code>groups</code> where the provider needs it
          to send groups (Okta); Entra ID and Google reject or ignore it.
        </p>
      </div>
      <div>
        <button type="submit" disabled={pending}>
          {pending ? "Checking…" : "Save OIDC provider"}
        </button>
      </div>
      <FormResult state={state} />
    </form>
  );
}
