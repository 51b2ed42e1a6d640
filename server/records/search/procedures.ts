import type { z } from "zod";
import type { Scope } from "../../platform/api-keys/scopes";
import { apiProcedure, router } from "../../trpc";
import { ACCOUNT_FILTERS, AccountListQuerySchema, AccountListSchema } from "../accounts/schema";
import { listAccounts } from "../accounts/service";
import { CONTACT_FILTERS, ContactListQuerySchema, ContactListSchema } from "../contacts/schema";
import { listContacts } from "../contacts/service";
import { DEAL_FILTERS, DealListQuerySchema, DealListSchema } from "../deals/schema";
import { listDeals } from "../deals/service";
import { DEVICE_FILTERS, DeviceListQuerySchema, DeviceListSchema } from "../devices/schema";
import { listDevices } from "../devices/service";
import type { FilterTable } from "../filters.schema";
import { NOTE_FILTERS, NoteListQuerySchema, NoteListSchema } from "../notes/schema";
import { listNotes } from "../notes/service";
import { TASK_FILTERS, TaskListQuerySchema, TaskListSchema } from "../tasks/schema";
import { listTasks } from "../tasks/service";
import { TOUCHPOINT_FILTERS, TouchpointListQuerySchema, TouchpointListSchema } from "../touchpoints/schema";
import { listTouchpoints } from "../touchpoints/service";
import {
  FILTER_GROUPS_MAX,
  FILTERS_PER_GROUP_MAX,
  SEARCH_BODY_MAX_BYTES,
  SEARCH_TYPE_SCOPES,
  SearchPageSchema,
  SearchQuerySchema,
  type StructuredSearch,
  structuredSearchSchema,
} from "./schema";
import { quickSearch } from "./service";
import { listQueryOf } from "./structured";

const QUICK_DESCRIPTION =
  "Finds accounts, contacts, deals and devices of the organisation by the words of their identifying text: account name, domain and externalId; contact first and last name, email (and its domain) and phone number (its digits too, with or without the country code); deal name; device hostname and RMM agent id; and the values of the custom fields marked searchable. Each word of q matches the start of a word, case- and accent-insensitively (ann matches Ann and Anne, zurich matches Zürich), and every word must match; results come best first (a match in the name over one in other identifying text, over one in a custom field value; a name equal to q or starting with it first). When nothing matches as written and q has at least 4 characters, records whose name is close to q (a typo: nortwind finds Northwind) are returned, ranked by similarity below 1. Only the types the key may read are searched (accounts:read, contacts:read, deals:read, devices:read); naming another in types is 403. A record is found by the request after the one that created or changed it, and no longer after it is deleted. Page with nextCursor, with no limit on how far.";

/** One resource's structured search: its list's schemas, filterable fields and list function. */
function structured<Query>(spec: {
  resource: string;
  tag: string;
  scope: Scope;
  filters: FilterTable;
  /** Whether the resource has custom fields, which filters may name as customFields.<key>. */
  customFields?: boolean;
  sort: z.ZodType;
  output: z.ZodType;
  list: (orgId: string, query: Query) => Promise<unknown>;
}) {
  return apiProcedure(spec.scope)
    .meta({
      openapi: {
        method: "POST",
        path: `/${spec.resource}/search`,
        tags: [spec.tag],
        summary: `Search ${spec.resource} with filter groups`,
        description: `The ${spec.resource} list (GET /${spec.resource}) with its filters as a body: filterGroups, up to ${FILTER_GROUPS_MAX} groups of up to ${FILTERS_PER_GROUP_MAX} filters each; a record matches when it matches every filter of any one group. Filters take the list's field[op] fields and operators, plus exists and notExists (the field has a value, or none) and between (numbers and times, inclusive)${spec.customFields ? "; a custom field is customFields.<key>, with the operators of its type (as customFields.<key>[op] in the list), exists, notExists, and between for number, currency, date and datetime fields" : ""}. sort, limit and cursor work as in the list (keyset pages with an opaque nextCursor, no limit on how far one pages). The body's JSON is at most ${SEARCH_BODY_MAX_BYTES} bytes. A wrong field, operator or value is 422 naming its place, e.g. filterGroups.0.filters.1.value. Reads only: records nothing.`,
      },
      envelope: "list",
      expensive: "search",
    })
    .input(structuredSearchSchema(spec.resource, spec.filters, spec.sort, spec.customFields))
    .output(spec.output as z.ZodType<unknown>)
    .mutation(({ ctx, input }) =>
      spec.list(ctx.principal.orgId, listQueryOf(input as StructuredSearch, spec.filters) as Query),
    );
}

/**
 * Search (docs/api-contract.md §4.17, §4.18): quick search across record types, `GET /search` (any read scope of a
 * searched type; each type needs its own), and structured search of each resource list, `POST /{resource}/search`
 * (the list's read scope). Errors: 400 (cursor), 401, 403, 422, as documented per operation in OpenAPI.
 */
export const searchRouter = router({
  /** `GET /search`: records of several types by the words of their identifying text, best first. */
  quick: apiProcedure(Object.values(SEARCH_TYPE_SCOPES))
    .meta({
      openapi: {
        method: "GET",
        path: "/search",
        tags: ["Search"],
        summary: "Search records",
        description: QUICK_DESCRIPTION,
      },
      envelope: "list",
      expensive: "search",
    })
    .input(SearchQuerySchema)
    .output(SearchPageSchema)
    .query(({ ctx, input }) => quickSearch(ctx.principal.orgId, ctx.principal.scopes, input)),

  /** `POST /accounts/search` (accounts:read). */
  accounts: structured({
    resource: "accounts",
    tag: "Accounts",
    scope: "accounts:read",
    filters: ACCOUNT_FILTERS,
    customFields: true,
    sort: AccountListQuerySchema.shape.sort,
    output: AccountListSchema,
    list: listAccounts,
  }),
  /** `POST /contacts/search` (contacts:read). */
  contacts: structured({
    resource: "contacts",
    tag: "Contacts",
    scope: "contacts:read",
    filters: CONTACT_FILTERS,
    customFields: true,
    sort: ContactListQuerySchema.shape.sort,
    output: ContactListSchema,
    list: listContacts,
  }),
  /** `POST /deals/search` (deals:read). */
  deals: structured({
    resource: "deals",
    tag: "Deals",
    scope: "deals:read",
    filters: DEAL_FILTERS,
    customFields: true,
    sort: DealListQuerySchema.shape.sort,
    output: DealListSchema,
    list: listDeals,
  }),
  /** `POST /devices/search` (devices:read). */
  devices: structured({
    resource: "devices",
    tag: "Devices",
    scope: "devices:read",
    filters: DEVICE_FILTERS,
    customFields: true,
    sort: DeviceListQuerySchema.shape.sort,
    output: DeviceListSchema,
    list: listDevices,
  }),
  /** `POST /tasks/search` (tasks:read). */
  tasks: structured({
    resource: "tasks",
    tag: "Tasks",
    scope: "tasks:read",
    filters: TASK_FILTERS,
    customFields: true,
    sort: TaskListQuerySchema.shape.sort,
    output: TaskListSchema,
    list: listTasks,
  }),
  /** `POST /notes/search` (notes:read). */
  notes: structured({
    resource: "notes",
    tag: "Notes",
    scope: "notes:read",
    filters: NOTE_FILTERS,
    sort: NoteListQuerySchema.shape.sort,
    output: NoteListSchema,
    list: listNotes,
  }),
  /** `POST /touchpoints/search` (touchpoints:read). */
  touchpoints: structured({
    resource: "touchpoints",
    tag: "Touchpoints",
    scope: "touchpoints:read",
    filters: TOUCHPOINT_FILTERS,
    sort: TouchpointListQuerySchema.shape.sort,
    output: TouchpointListSchema,
    list: listTouchpoints,
  }),
});
