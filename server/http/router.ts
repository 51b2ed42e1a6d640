import { eventsRouter } from "../platform/events-feed/procedures";
import { usageRouter } from "../platform/request-log/procedures";
import { statusRouter } from "../platform/status/procedures";
import { accountsRouter } from "../records/accounts/procedures";
import { contactsRouter } from "../records/contacts/procedures";
import { customFieldsRouter } from "../records/custom-fields/procedures";
import { dealsRouter } from "../records/deals/procedures";
import { devicesRouter } from "../records/devices/procedures";
import { healthRouter } from "../records/health/procedures";
import { mrrRouter } from "../records/mrr/procedures";
import { notesRouter } from "../records/notes/procedures";
import { searchRouter } from "../records/search/procedures";
import { tasksRouter } from "../records/tasks/procedures";
import { touchpointsRouter } from "../records/touchpoints/procedures";
import { router } from "../trpc";
import { webhookEndpointsRouter } from "../webhooks/procedures";

/** The public API v1: every procedure here is a REST operation under `/api/v1` (docs/api-contract.md §4). */
export const v1Router = router({
  status: statusRouter,
  accounts: accountsRouter,
  contacts: contactsRouter,
  deals: dealsRouter,
  tasks: tasksRouter,
  devices: devicesRouter,
  touchpoints: touchpointsRouter,
  notes: notesRouter,
  healthScores: healthRouter,
  mrr: mrrRouter,
  events: eventsRouter,
  webhookEndpoints: webhookEndpointsRouter,
  search: searchRouter,
  usage: usageRouter,
  customFields: customFieldsRouter,
});

/** Type of the v1 router. */
export type V1Router = typeof v1Router;
