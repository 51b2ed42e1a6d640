"use client";

import { useEffect, useState } from "react";
import { authClient } from "../_lib/auth-client";

/**
 * "Sign in with a passkey": asks the browser's authenticator (WebAuthn), then goes to `next`. Shown only where the
 * browser supports passkeys and scripts run; the password form works everywhere.
 */
export function PasskeySignIn({ next, label = "Sign in with a passkey" }: { next: string; label?: string }) {
  const [supported, setSupported] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  useEffect(() => setSupported(typeof window !== "undefined" && "PublicKeyCredential" in window), []);
  if (!supported) return null;

  async function signIn() {
    setPending(true);
    setError(null);
    const result = await authClient.signIn.passkey();
    if (result?.error) {
      setError(result.error.message ?? "The passkey was not accepted");
      setPending(false);
      return;
    }
    window.location.assign(next);
  }

  return (
    <div className="stack">
      <button type="button" className="secondary" onClick={signIn} disabled={pending}>
        {pending ? "Waiting for your passkey…" : label}
      </button>
      <div aria-live="polite">
        {error ? (
          <p role="alert" className="alert error">
            {error}
          </p>
        ) : null}
      </div>
    </div>
  );
}
