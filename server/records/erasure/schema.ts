// Erasure of a person (docs/api-contract.md §4.16): what `POST /contacts/{id}/erase` answers.
import { z } from "zod";
import { IdSchema } from "../../contract/common";
import { CONTACT_ERASURE_EXAMPLE } from "../../contract/examples";

const count = (what: string) => z.int().min(0).max(Number.MAX_SAFE_INTEGER).describe(what);

/**
 * Answer of `POST /contacts/{id}/erase` (docs/api-contract.md §4.16): the contact's id, and per store the rows the
 * erasure removed or changed. Every count is of rows, each changed once; a row that held nothing of the person is not
 * counted.
 */
export const ContactErasureSchema = z
  .object({
    id: IdSchema.describe("Id of the erased contact. It names no record any more: a second erasure is 404."),
    erased: z.literal(true).describe("Always true."),
    removed: z
      .object({
        contacts: count("The contact itself: 1."),
        accountLinks: count("Account relationships of the contact, removed with it."),
        touchpointLinks: count(
          "Touchpoints that named the contact (contactId): they stay, with contactId null and updatedAt moved.",
        ),
      })
      .describe("Rows removed, or references cleared, with the contact."),
    redacted: z
      .object({
        events: count(
          "Stored events (the events feed and the source of every webhook delivery) whose data or previous held the person's data: the contact's own events, and any other event whose text held one of its identifying values.",
        ),
        webhookDeliveries: count(
          "Webhook deliveries of those events: each later attempt or redelivery sends the redacted payload. Copies already delivered are the receivers'.",
        ),
        deliveryAttempts: count("Delivery attempts whose stored answer body or error held one of the values."),
        auditLogs: count(
          "Request-log rows whose path or query string held one of the values (the row stays, the value goes): the organisation's rows, and rows without an organisation whose path held one.",
        ),
        idempotencyRecords: count(
          "Stored answers of idempotent requests (kept 24 hours) that carried the contact or one of the values.",
        ),
        customFieldRecords: count(
          "Records of any resource (accounts, contacts, deals, devices, tasks) with a custom field value equal to one of the values: that value is cleared (as if set to null), the record's updatedAt moves and its quick-search entry no longer holds it.",
        ),
      })
      .describe('Rows kept with the person\'s values replaced by "[erased]".'),
  })
  .meta({ id: "ContactErasure", example: CONTACT_ERASURE_EXAMPLE });

/** What an erasure did. */
export type ContactErasure = z.infer<typeof ContactErasureSchema>;
