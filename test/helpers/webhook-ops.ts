// Making webhook history for the tests of replays, filters, alerts and statistics: changes made through the real API,
// fanned out by the service and delivered by the deliver function's handler with the attempt numbers Inngest would
// pass, so every row is one the service itself wrote.
import { RetryAfterError } from "inngest";
import { expect } from "vitest";
import { deliverWebhook } from "../../inngest/functions/deliver-webhook";
import { prisma } from "../../server/db/transaction";
import { type DeliveryRef, fanOutEvents } from "../../server/webhooks/deliveries";
import { dispatchesSettled } from "../../server/webhooks/hand-over";
import type { client } from "./api";

type Api = ReturnType<typeof client>;

/** Fans out every event of the organisation not fanned out yet, oldest first. @returns the deliveries it made. */
export async function fanOutPending(orgId: string): Promise<DeliveryRef[]> {
  await dispatchesSettled();
  const events = await prisma().event.findMany({
    where: { orgId, fannedOutAt: null },
    orderBy: { sequence: "asc" },
    select: { id: true },
  });
  return fanOutEvents(events.map((event) => event.id));
}

/** Creates `count` accounts through the API. @returns their ids, in order. */
export async function createAccounts(api: Api, count: number, prefix = "Account"): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await api("POST", "/accounts", { name: `${prefix} ${i + 1}` });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    ids.push(res.body.data.id);
  }
  return ids;
}

/**
 * Runs one scheduled attempt of each delivery as the deliver function (`attempt` 0–4; 4 is the last of 5, whose
 * failure closes the delivery FAILED and counts against its endpoint).
 */
export async function attemptAll(deliveries: readonly DeliveryRef[], attempt: number): Promise<void> {
  for (const delivery of deliveries) {
    await deliverWebhook({ event: { data: delivery }, attempt }).catch((error: unknown) => {
      // A retry to come is what Inngest is told with RetryAfterError; the attempt is recorded all the same.
      if (!(error instanceof RetryAfterError)) throw error;
    });
  }
}

/** The endpoint's deliveries by state, for assertions. */
export async function deliveryStates(endpointId: string): Promise<Record<string, number>> {
  const rows = await prisma().webhookDelivery.groupBy({ by: ["status"], where: { endpointId }, _count: true });
  return Object.fromEntries(rows.map((row) => [row.status, row._count]));
}
