import { z } from "zod";
import { ApiError } from "../../errors";
import { type Permission, type Role, scopesBeyondRole } from "../../identity/roles";
import { actorOf } from "../../identity/session";
import { authorize, memberProcedure, orgProcedure, router } from "../../settings/trpc";
import { rotateApiKey } from "./rotation";
import { createApiKey, describeKey, getApiKey, listApiKeys, revokeApiKey } from "./service";

const IdSchema = z.object({ id: z.string().min(1).max(64).describe("API key id") });

const permissionFor = (isTest: boolean): Permission => (isTest ? "apiKey:manageTest" : "apiKey:manageLive");

const beyondRole = scopesBeyondRole;

// A key never does through the API what its creator's role may not do in the settings.
function scopeRefusal(role: Role, scopes: string[], orgName: string): string {
  return `Your role (${role}) cannot give a key ${scopes.join(", ")}: ask an owner or admin of ${orgName}`;
}

/**
 * API keys of the member's organisation (docs/api-contract.md §5, §5.10; docs/architecture.md,
 * "Settings: sign-in, team and roles"): every role sees them (prefix, scopes, last use, creator; never secrets); test
 * keys are created, rotated and revoked by owners, admins and developers, live keys by owners and admins. Creating or
 * rotating any key needs a recent sign-in (step-up, 15 minutes), and a key carries no scope its creator's role could
 * not use in the settings. Scope rules are the services' (`validateRequestedScopes`). Every change is in the audit
 * trail, written by the service in the change's transaction.
 */
export const apiKeysRouter = router({
  /** Every key of the organisation, newest first, with its expiry (rotated keys) and creator. */
  list: orgProcedure("apiKey:read").query(({ ctx }) => listApiKeys(ctx.member.org.id)),

  /**
   * Creates a key recording its creator. `mode` `live` makes a `msp_live_` key, `test` a `msp_test_` key
   * (docs/api-contract.md §5.2, §5.6); `serviceKey` makes an organisation service key, which outlives its creator's
   * membership (§11.5). @returns `{ key, raw }`: `raw` is shown once and never stored.
   * @throws 403 for a role that cannot manage keys of that mode or give one of the scopes, or without a recent sign-in;
   *         403 `insufficient_scope` for refused deprecated scopes; 422 for unknown or no scopes.
   */
  create: memberProcedure
    .input(
      z.object({
        name: z.string().trim().min(1, "Name is required").max(100, "Name is at most 100 characters"),
        mode: z.enum(["live", "test"]),
        scopes: z.array(z.string().max(100)).max(50),
        /** An organisation service key: kept when its creator is removed or deprovisioned (§11.5). */
        serviceKey: z.boolean().default(false),
      }),
    )
    .mutation(async ({ ctx, input, path }) => {
      const isTest = input.mode === "test";
      const beyond = beyondRole(ctx.member.role, input.scopes);
      await authorize(ctx.member, permissionFor(isTest), {
        attempted: path,
        target: `${input.mode} key "${input.name}"`,
        stepUp: true,
        allowed: beyond.length === 0,
        reason: scopeRefusal(ctx.member.role, beyond, ctx.member.org.name),
      });
      return createApiKey(
        ctx.member.org.id,
        { name: input.name, scopes: input.scopes, isTest, serviceKey: input.serviceKey },
        { createdById: ctx.member.user.id, actor: actorOf(ctx.member) },
      );
    }),

  /**
   * Revokes a key at once; its next request gets 401.
   * @throws 403 for a role that cannot manage keys of the key's mode; 404 when not an active key of the organisation.
   */
  revoke: memberProcedure.input(IdSchema).mutation(async ({ ctx, input, path }) => {
    const key = await getApiKey(ctx.member.org.id, input.id);
    await authorize(ctx.member, permissionFor(key.isTest), { attempted: path, target: describeKey(key) });
    await revokeApiKey(ctx.member.org.id, input.id, actorOf(ctx.member));
    return { id: input.id, revoked: true as const };
  }),

  /**
   * Rotates a key: a new key with the same name, scopes and mode, created by the rotating member; the old one keeps
   * working for 24 hours. @returns `{ key, raw, previous: { id, expiresAt } }`.
   * @throws 403 for a role that cannot manage keys of the key's mode or give one of its scopes, or without a recent
   *         sign-in; 404 when not an active key of the organisation; 422 when it was already rotated or backs a
   *         connected OAuth client.
   */
  rotate: memberProcedure.input(IdSchema).mutation(async ({ ctx, input, path }) => {
    const key = await getApiKey(ctx.member.org.id, input.id);
    if (key.oauthClientId) {
      // Its raw key is never shown: a new one would be a key nobody holds, and the client's tokens name the old one.
      throw new ApiError(
        "validation_error",
        "This key backs a connected client: revoke it and connect the client again",
      );
    }
    const beyond = beyondRole(ctx.member.role, key.scopes);
    await authorize(ctx.member, permissionFor(key.isTest), {
      attempted: path,
      target: describeKey(key),
      stepUp: true,
      allowed: beyond.length === 0,
      reason: scopeRefusal(ctx.member.role, beyond, ctx.member.org.name),
    });
    return rotateApiKey(ctx.member.org.id, input.id, {
      createdById: ctx.member.user.id,
      actor: actorOf(ctx.member),
    });
  }),
});
