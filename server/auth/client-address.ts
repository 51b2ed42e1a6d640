/**
 * Header `npm start` sets on every page request to the client address under `TRUST_PROXY` (scripts/serve.ts). Its own
 * module, so the server reads it without importing better-auth (server/services/auth.ts re-exports it).
 */
export const CLIENT_ADDRESS_HEADER = "x-crm-client-address";
