import { z } from "zod";
import { authorize, memberProcedure, orgProcedure, router } from "../../settings/trpc";
import { type Permission, scopesBeyondRole } from "../roles";
import { actorOf } from "../session";
import { connectClient, declineClient, describeConsentRequest, listConnections, revokeConnection } from "./connections";

const permissionFor = (isTest: boolean): Permission => (isTest ? "apiKey:manageTest" : "apiKey:manageLive");

const QuerySchema = z.string().min(1).max(8192).describe("The signed query the consent page was opened with");

/**
 * OAuth connections of the member's organisation (docs/api-contract.md §10.6; docs/architecture.md, "The MCP server"):
 * the consent page's request, the consent itself, the list of connected clients and their revocation. A consent is the
 * creation of a key, under the same rules: the mode's permission (live keys: owners and admins; test keys: developers
 * too), no scope beyond the member's role, the organisation's two-factor requirement and a sign-in within 15 minutes.
 */
export const oauthRouter = router({
  /**
   * What the consent page shows: the client's name, the host it sends the browser back to, the scopes it asked for.
   * @throws 400 `bad_request` for an expired request or an unknown client.
   */
  request: memberProcedure
    .input(z.object({ oauthQuery: QuerySchema }))
    .query(({ input }) => describeConsentRequest(input.oauthQuery)),

  /**
   * Connects the client to the session's organisation with `scopes` as a `mode` key, and answers where the browser goes
   * next (the client's redirect URI with the authorization code). @returns `{ redirectUrl, key }`.
   * @throws 403 for a role that cannot create keys of that mode or give one of the scopes, without the second factor
   *         the organisation requires, or without a recent sign-in; 400 for an expired or forged request; 422 for
   *         no scope, an unknown one, or one the client did not ask for.
   */
  consent: memberProcedure
    .input(
      z.object({
        oauthQuery: QuerySchema,
        mode: z.enum(["live", "test"]),
        scopes: z.array(z.string().max(100)).max(50),
      }),
    )
    .mutation(async ({ ctx, input, path }) => {
      const isTest = input.mode === "test";
      const beyond = scopesBeyondRole(ctx.member.role, input.scopes);
      const { clientName } = await describeConsentRequest(input.oauthQuery);
      await authorize(ctx.member, permissionFor(isTest), {
        attempted: path,
        target: `${input.mode} connection of "${clientName}"`,
        stepUp: true,
        allowed: beyond.length === 0,
        reason: `Your role (${ctx.member.role}) cannot give ${clientName} ${beyond.join(", ")}: ask an owner or admin of ${ctx.member.org.name}`,
      });
      return connectClient(
        {
          orgId: ctx.member.org.id,
          userId: ctx.member.user.id,
          origin: ctx.member.request.origin,
          headers: ctx.member.request.headers,
          actor: actorOf(ctx.member),
        },
        { oauthQuery: input.oauthQuery, isTest, scopes: input.scopes },
      );
    }),

  /** Sends the client `access_denied`: @returns `{ redirectUrl }`, its redirect URI with the error. */
  decline: memberProcedure
    .input(z.object({ oauthQuery: QuerySchema }))
    .mutation(({ ctx, input }) => declineClient(ctx.member.request, input.oauthQuery)),

  /** The organisation's connected clients, newest first, with their scopes and last use. */
  connections: orgProcedure("apiKey:read").query(({ ctx }) => listConnections(ctx.member.org.id)),

  /**
   * Revokes a connection: its tokens are refused from the next request (within 0.5 s on every instance).
   * @throws 403 for a role that cannot manage keys of the connection's mode; 404 when not an active connection.
   */
  revoke: memberProcedure
    .input(z.object({ keyId: z.string().min(1).max(64) }))
    .mutation(async ({ ctx, input, path }) => {
      const connection = (await listConnections(ctx.member.org.id)).find((item) => item.keyId === input.keyId);
      await authorize(ctx.member, permissionFor(connection?.isTest ?? false), {
        attempted: path,
        target: connection ? `connection of "${connection.clientName}"` : `connection ${input.keyId}`,
      });
      await revokeConnection(ctx.member.org.id, input.keyId, actorOf(ctx.member));
      return { keyId: input.keyId, revoked: true as const };
    }),
});
