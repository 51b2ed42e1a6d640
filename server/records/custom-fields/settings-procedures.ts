import { z } from "zod";
import { IdSchema } from "../../contract/common";
import { actorOf, type SignedInMember } from "../../identity/session";
import { orgProcedure, router } from "../../settings/trpc";
import type { WriteOrigin } from "../events";
import {
  CUSTOM_FIELD_LIMITS,
  CUSTOM_FIELD_RESOURCES,
  type CustomField,
  CustomFieldCreateSchema,
  CustomFieldUpdateSchema,
} from "./schema";
import { archiveCustomField, createCustomField, listCustomFields, updateCustomField } from "./service";

const read = orgProcedure("customField:read");
const manage = orgProcedure("customField:manage");

/** A member's changes record events as the user (docs/api-contract.md §6.2: `actor` `{type: "user", id}`). */
function originOf(member: SignedInMember): WriteOrigin {
  return { isTest: false, userId: member.user.id };
}

/**
 * Custom field definitions of the member's organisation (docs/api-contract.md §2.13, §5.10; docs/architecture.md,
 * "Custom fields"): every role sees them; owners and admins create, change and archive them, with the same rules,
 * events and audit entries as the API (the services are shared and write each change's audit entry in its
 * transaction).
 */
export const customFieldsRouter = router({
  /**
   * Every field of the organisation, archived ones too, by resource in the order of `CUSTOM_FIELD_RESOURCES` then
   * oldest first (at most 100 active ones per resource plus archived ones awaiting their purge).
   */
  list: read.query(async ({ ctx }) => {
    const fields: CustomField[] = [];
    for (const resource of CUSTOM_FIELD_RESOURCES) {
      let cursor: string | undefined;
      do {
        const page = await listCustomFields(ctx.member.org.id, {
          limit: 100,
          cursor,
          resource,
          includeArchived: true,
        });
        fields.push(...page.data);
        cursor = page.hasMore ? (page.nextCursor ?? undefined) : undefined;
      } while (cursor);
    }
    return { fields, limits: CUSTOM_FIELD_LIMITS };
  }),

  /** Defines a field. @throws 403; 422 on the key, the limit of 100 active fields, options. */
  create: manage
    .input(CustomFieldCreateSchema)
    .mutation(({ ctx, input }) =>
      createCustomField(ctx.member.org.id, input, originOf(ctx.member), actorOf(ctx.member)),
    ),

  /** Changes label, description, flags or options. @throws 403; 404; 422 (archived field, a removed option). */
  update: manage
    .input(CustomFieldUpdateSchema)
    .mutation(({ ctx, input }) =>
      updateCustomField(ctx.member.org.id, input, originOf(ctx.member), actorOf(ctx.member)),
    ),

  /** Archives a field: its values leave every record at once and are purged 30 days later. @throws 403; 404. */
  archive: manage
    .input(z.object({ id: IdSchema }))
    .mutation(({ ctx, input }) =>
      archiveCustomField(ctx.member.org.id, input.id, originOf(ctx.member), actorOf(ctx.member)),
    ),
});
