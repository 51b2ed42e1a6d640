"use client";

import { useEffect, useState } from "react";
import { authClient } from "../../_lib/auth-client";

/**
 * "Add a passkey": names it, asks the browser's authenticator to create a credential (WebAuthn) and registers it;
 * the page then reloads with it listed. Shown only where the browser supports passkeys.
 */
export function AddPasskey() {
  const [supported, setSupported] = useState<boolean | null>(null);
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  useEffect(() => setSupported("PublicKeyCredential" in window), []);
  if (supported === null) return null;
  if (!supported) return <p className="muted">This browser does not support passkeys.</p>;

  async function add(event: React.FormEvent) {
    event.preventDefault();
    setPending(true);
    setError(null);
    const result = await authClient.passkey.addPasskey({ name: name.trim() || undefined });
    if (result?.error) {
      setError(result.error.message ?? "The passkey was not registered");
      setPending(false);
      return;
    }
    window.location.reload();
  }

  return (
    <form className="stack" onSubmit={add}>
      <div className="field">
        <label htmlFor="passkey-name">Passkey name</label>
        <input
          id="passkey-name"
          type="text"
          maxLength={100}
          value={name}
          onChange={(event) => setName(event.target.value)}
          placeholder="e.g. Work laptop"
        />
      </div>
      <div>
        <button type="submit" disabled={pending}>
          {pending ? "Waiting for your authenticator…" : "Add a passkey"}
        </button>
      </div>
      <div aria-live="polite">
        {error ? (
          <p role="alert" className="alert error">
            {error}
          </p>
        ) : null}
      </div>
    </form>
  );
}
