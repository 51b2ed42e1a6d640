/**
 * Header `npm start` sets on every page request to the client address under `TRUST_PROXY` (scripts/serve.ts). Its own
 * module, so the server reads it without importing better-auth; everything imports it from here.
 */
export const CLIENT_ADDRESS_HEADER = "x-crm-client-address";
