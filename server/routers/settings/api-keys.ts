import { z } from "zod";
import type { Permission } from "../../auth/roles";
import { rotateApiKey } from "../../services/api-key-rotation";
import { type ApiKeySummary, createApiKey, getApiKey, listApiKeys, revokeApiKey } from "../../services/api-keys";
import { recordSettingsAudit } from "../../services/settings-audit";
import { actorOf } from "../../services/settings-session";
import { authorize, memberProcedure, orgProcedure, router } from "./trpc";

const IdSchema = z.object({ id: z.string().min(1).max(64).describe("API key id") });

const mode = (isTest: boolean) => (isTest ? "test" : "live");
const permissionFor = (isTest: boolean): Permission => (isTest ? "apiKey:manageTest" : "apiKey:manageLive");
const describe = (key: Pick<ApiKeySummary, "isTest" | "name" | "prefix">) =>
  `${mode(key.isTest)} key "${key.name}" (${key.prefix}…)`;

/**
 * API keys of the member's organisation (docs/api-contract.md §5; docs/architecture.md,
 * "Settings: sign-in, team and roles"): every role sees them (prefix, scopes, last use; never secrets); test keys are
 * created, rotated and revoked by owners, admins and developers, live keys by owners and admins after a recent sign-in
 * (step-up, 15 minutes) for creating and rotating. Scope rules are the services' (`validateRequestedScopes`). Every
 * change is in the audit trail.
 */
export const apiKeysRouter = router({
  /** Every key of the organisation, newest first, with its expiry (rotated keys). */
  list: orgProcedure("apiKey:read").query(({ ctx }) => listApiKeys(ctx.member.org.id)),

  /**
   * Creates a key. `mode` `live` makes a `msp_live_` key, `test` a `msp_test_` key (docs/api-contract.md §5.2, §5.6).
   * @returns `{ key, raw }`: `raw` is shown once and never stored.
   * @throws 403 for a role that cannot manage keys of that mode, or a live key without a recent sign-in; 403
   *         `insufficient_scope` for refused deprecated scopes; 422 for unknown or no scopes.
   */
  create: memberProcedure
    .input(
      z.object({
        name: z.string().trim().min(1, "Name is required").max(100, "Name is at most 100 characters"),
        mode: z.enum(["live", "test"]),
        scopes: z.array(z.string().max(100)).max(50),
      }),
    )
    .mutation(async ({ ctx, input, path }) => {
      const isTest = input.mode === "test";
      await authorize(ctx.member, permissionFor(isTest), {
        attempted: path,
        target: `${input.mode} key "${input.name}"`,
        stepUp: !isTest,
      });
      const created = await createApiKey(ctx.member.org.id, { name: input.name, scopes: input.scopes, isTest });
      await recordSettingsAudit(ctx.member.org.id, actorOf(ctx.member), {
        action: "apiKey.created",
        target: describe(created.key),
        details: { mode: input.mode, keyId: created.key.id, scopes: created.key.scopes.join(" ") },
      });
      return created;
    }),

  /**
   * Revokes a key at once; its next request gets 401.
   * @throws 403 for a role that cannot manage keys of the key's mode; 404 when not an active key of the organisation.
   */
  revoke: memberProcedure.input(IdSchema).mutation(async ({ ctx, input, path }) => {
    const key = await getApiKey(ctx.member.org.id, input.id);
    await authorize(ctx.member, permissionFor(key.isTest), { attempted: path, target: describe(key) });
    await revokeApiKey(ctx.member.org.id, input.id);
    await recordSettingsAudit(ctx.member.org.id, actorOf(ctx.member), {
      action: "apiKey.revoked",
      target: describe(key),
      details: { mode: mode(key.isTest), keyId: key.id },
    });
    return { id: input.id, revoked: true as const };
  }),

  /**
   * Rotates a key: a new key with the same name, scopes and mode; the old one keeps working for 24 hours.
   * @returns `{ key, raw, previous: { id, expiresAt } }`.
   * @throws 403 for a role that cannot manage keys of the key's mode, or a live key without a recent sign-in; 404 when
   *         not an active key of the organisation; 422 when it was already rotated.
   */
  rotate: memberProcedure.input(IdSchema).mutation(async ({ ctx, input, path }) => {
    const key = await getApiKey(ctx.member.org.id, input.id);
    await authorize(ctx.member, permissionFor(key.isTest), {
      attempted: path,
      target: describe(key),
      stepUp: !key.isTest,
    });
    const rotated = await rotateApiKey(ctx.member.org.id, input.id);
    await recordSettingsAudit(ctx.member.org.id, actorOf(ctx.member), {
      action: "apiKey.rotated",
      target: describe(key),
      details: { mode: mode(key.isTest), keyId: key.id, successorId: rotated.key.id },
    });
    return rotated;
  }),
});
