import { router } from "../../trpc";
import { accountsRouter } from "./accounts";
import { contactsRouter } from "./contacts";
import { customFieldsRouter } from "./custom-fields";
import { dealsRouter } from "./deals";
import { devicesRouter } from "./devices";
import { eventsRouter } from "./events";
import { healthRouter } from "./health";
import { mrrRouter } from "./mrr";
import { notesRouter } from "./notes";
import { searchRouter } from "./search";
import { statusRouter } from "./status";
import { tasksRouter } from "./tasks";
import { touchpointsRouter } from "./touchpoints";
import { usageRouter } from "./usage";
import { webhookEndpointsRouter } from "./webhook-endpoints";

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
