// Reading and deleting a dynamic registration (RFC 7592; docs/api-contract.md §10.6): the provider registers clients
// (RFC 7591) but keeps no management credential, so each registration gets ours here: a random token, its SHA-256
// stored beside the client, shown once in the registration's answer with the URI it works at.
import { hash, randomBytes } from "node:crypto";
import { prisma } from "../../db/transaction";

/** Where a registration is read (GET) and deleted (DELETE), under the auth base path of an origin. */
export function registrationClientUri(authBaseUrl: string, clientId: string): string {
  return `${authBaseUrl}/oauth2/register/${encodeURIComponent(clientId)}`;
}

/**
 * Issues the management token of a registration the provider has just made.
 * @returns `{ registration_client_uri, registration_access_token }`, to add to the registration's answer.
 */
export async function issueRegistrationToken(
  authBaseUrl: string,
  clientId: string,
): Promise<{ registration_client_uri: string; registration_access_token: string }> {
  const token = `mrt_${randomBytes(32).toString("base64url")}`;
  await prisma().oauthClientRegistration.create({ data: { clientId, tokenHash: hash("sha256", token, "hex") } });
  return { registration_client_uri: registrationClientUri(authBaseUrl, clientId), registration_access_token: token };
}

/**
 * The registration of `clientId` when `token` is its management token, as RFC 7592 §3 answers it (the client's
 * metadata, without any secret), else null (unknown client, or another token: the same answer).
 */
export async function readRegistration(
  authBaseUrl: string,
  clientId: string,
  token: string,
): Promise<Record<string, unknown> | null> {
  const registration = await prisma().oauthClientRegistration.findUnique({ where: { clientId } });
  if (!registration || registration.tokenHash !== hash("sha256", token, "hex")) return null;
  const client = await prisma().oauthClient.findUnique({ where: { clientId } });
  if (!client) return null;
  return {
    client_id: client.clientId,
    client_name: client.name ?? undefined,
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes ?? undefined,
    response_types: client.responseTypes ?? undefined,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? undefined,
    scope: Array.isArray(client.scopes) ? (client.scopes as string[]).join(" ") : undefined,
    client_id_issued_at: client.createdAt ? Math.floor(client.createdAt.getTime() / 1000) : undefined,
    registration_client_uri: registrationClientUri(authBaseUrl, clientId),
  };
}

/**
 * Deletes the client of `clientId` when `token` is its management token (RFC 7592 §2.3), with its consents and tokens;
 * its connections' keys stay until revoked but its tokens no longer refresh.
 * @returns whether it was deleted.
 */
export async function deleteRegistration(clientId: string, token: string): Promise<boolean> {
  const registration = await prisma().oauthClientRegistration.findUnique({ where: { clientId } });
  if (!registration || registration.tokenHash !== hash("sha256", token, "hex")) return false;
  await prisma().oauthClient.deleteMany({ where: { clientId } });
  await prisma().oauthClientRegistration.deleteMany({ where: { clientId } });
  return true;
}
