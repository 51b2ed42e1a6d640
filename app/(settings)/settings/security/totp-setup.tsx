"use client";

import { useActionState } from "react";
import { CopyButton } from "../../_components/copy-button";
import { FormResult } from "../../_components/form-result";
import { type FormState, IDLE } from "../../_lib/form-state";
import { confirmTotpAction, startTotpAction, type TotpState } from "./actions";

/**
 * Setting up an authenticator app: the password, then the QR code with the secret as text and the ten backup codes
 * (shown once), then a code from the app to turn two-factor on.
 */
export function TotpSetup() {
  const [state, start, starting] = useActionState<TotpState, FormData>(startTotpAction, IDLE);
  const [confirmed, confirm, confirming] = useActionState<FormState, FormData>(confirmTotpAction, IDLE);
  const enrolment = state.enrolment;
  if (!enrolment) {
    return (
      <form action={start} className="stack">
        <div className="field">
          <label htmlFor="totp-password">Your password</label>
          <input id="totp-password" name="password" type="password" autoComplete="current-password" required />
        </div>
        <div>
          <button type="submit" disabled={starting}>
            {starting ? "Preparing…" : "Set up an authenticator app"}
          </button>
        </div>
        <FormResult state={state} />
      </form>
    );
  }
  return (
    <div className="stack" data-testid="totp-enrolment">
      <FormResult state={{ status: state.status, message: state.message }} />
      {/* Made on our server by the qrcode package from the otpauth URI; nothing is loaded from elsewhere. */}
      {/* biome-ignore lint/performance/noImgElement: a data URL, not a remote image to optimise */}
      <img src={enrolment.qrDataUrl} alt="QR code for your authenticator app" width={200} height={200} className="qr" />
      <p>
        Secret (type it in if you cannot scan): <code data-testid="totp-secret">{enrolment.secret}</code>
      </p>
      <CopyButton value={enrolment.secret} label="Copy the secret" />
      <div>
        <p>
          <strong>Backup codes.</strong> Each signs you in once if you lose your app. They are shown only this once:
          store them somewhere safe.
        </p>
        <ul className="scope-list" data-testid="backup-codes">
          {enrolment.backupCodes.map((code) => (
            <li key={code}>
              <code>{code}</code>
            </li>
          ))}
        </ul>
        <CopyButton value={enrolment.backupCodes.join("\n")} label="Copy the backup codes" />
      </div>
      {confirmed.status === "ok" ? (
        <FormResult state={confirmed} />
      ) : (
        <form action={confirm} className="stack">
          <div className="field">
            <label htmlFor="totp-code">Code from your app</label>
            <input
              id="totp-code"
              name="code"
              type="text"
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              maxLength={10}
            />
          </div>
          <div>
            <button type="submit" disabled={confirming}>
              {confirming ? "Checking…" : "Turn on two-factor"}
            </button>
          </div>
          <FormResult state={confirmed} />
        </form>
      )}
    </div>
  );
}
