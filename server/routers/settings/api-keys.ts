import { z } from "zod";
import { rotateApiKey } from "../../services/api-key-rotation";
import { createApiKey, listApiKeys, revokeApiKey } from "../../services/api-keys";
import { router, sessionProcedure } from "./trpc";

const IdSchema = z.object({ id: z.string().min(1).max(64).describe("API key id") });

/**
 * API keys of the signed-in user's organisation (spec §5; issue #6): list, create (raw key returned once), revoke,
 * rotate. Scope rules are the services' (`validateRequestedScopes`): deprecated `reconciliation:*` and
 * `onboarding:read` are refused with 403 `insufficient_scope`, `contracts:read` is accepted and grants nothing.
 */
export const apiKeysRouter = router({
  /** Every key of the organisation, newest first, with its expiry (rotated keys). */
  list: sessionProcedure.query(({ ctx }) => listApiKeys(ctx.session.orgId)),

  /**
   * Creates a key. `mode` `live` makes a `msp_live_` key, `test` a `msp_test_` key (spec §5.2, §5.6).
   * @returns `{ key, raw }`: `raw` is shown once and never stored.
   * @throws 403 `insufficient_scope` for refused deprecated scopes; 422 for unknown or no scopes.
   */
  create: sessionProcedure
    .input(
      z.object({
        name: z.string().trim().min(1, "Name is required").max(100, "Name is at most 100 characters"),
        mode: z.enum(["live", "test"]),
        scopes: z.array(z.string().max(100)).max(50),
      }),
    )
    .mutation(({ ctx, input }) =>
      createApiKey(ctx.session.orgId, { name: input.name, scopes: input.scopes, isTest: input.mode === "test" }),
    ),

  /** Revokes a key at once; its next request gets 401. @throws 404 when not an active key of the organisation. */
  revoke: sessionProcedure.input(IdSchema).mutation(async ({ ctx, input }) => {
    await revokeApiKey(ctx.session.orgId, input.id);
    return { id: input.id, revoked: true as const };
  }),

  /**
   * Rotates a key: a new key with the same name, scopes and mode; the old one keeps working for 24 hours.
   * @returns `{ key, raw, previous: { id, expiresAt } }`.
   * @throws 404 when not an active key of the organisation; 422 when it was already rotated.
   */
  rotate: sessionProcedure.input(IdSchema).mutation(({ ctx, input }) => rotateApiKey(ctx.session.orgId, input.id)),
});
