import { z } from "zod";
import { orgProcedure, router } from "../../settings/trpc";
import { listSettingsAudit, listSettingsAuditActors } from "./service";

const read = orgProcedure("audit:read");

/**
 * The organisation's settings audit trail (docs/architecture.md, "Settings: sign-in, team and roles"): who did what,
 * when and from where. Owners and admins see it.
 */
export const auditRouter = router({
  /**
   * Entries newest first, filtered by actor (a user id, or an email for actors without an account) and action,
   * keyset-paginated. @returns `{ data, hasMore, nextCursor }`.
   * @throws 403 for developers and viewers; 422 for an unknown action; 400 for a malformed cursor.
   */
  list: read
    .input(
      z.object({
        actor: z.string().max(320).optional(),
        action: z.string().max(64).optional(),
        cursor: z.string().max(40).optional(),
        limit: z.number().int().min(1).max(100).optional(),
      }),
    )
    .query(({ ctx, input }) => listSettingsAudit(ctx.member.org.id, input)),

  /** The actors of the trail for the filter: `{ value, email }` (value = user id, or email). @throws 403. */
  actors: read.query(({ ctx }) => listSettingsAuditActors(ctx.member.org.id)),
});
