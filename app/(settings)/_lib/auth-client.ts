"use client";

import { passkeyClient } from "@better-auth/passkey/client";
import { createAuthClient } from "better-auth/client";

/**
 * better-auth's browser client for the one thing only a browser can do: WebAuthn (passkeys), against
 * `/api/auth/passkey/…` of the page's own origin.
 */
export const authClient = createAuthClient({ plugins: [passkeyClient()] });
