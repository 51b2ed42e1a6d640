import { trace } from "@opentelemetry/api";
import { eventType, Inngest, Middleware, staticSchema } from "inngest";
import { withStatementClass } from "../server/db/statement-budget";

/**
 * The Inngest client of the service (docs/architecture.md, "Webhooks and the outbox"). Configured from the environment,
 * read by the SDK:
 * - production (Inngest Cloud): `INNGEST_EVENT_KEY` (send events) and `INNGEST_SIGNING_KEY` (verify calls to
 *   `/api/inngest`);
 * - development: `INNGEST_DEV=1` (Dev Server on http://localhost:8288) or `INNGEST_DEV=<url of a Dev Server>`.
 * With neither, events are not sent at all (see `workerMode` in server/webhooks/worker.ts); the outbox keeps them.
 */
/**
 * Names the span Inngest's SDK opens for each function run (`inngest.execution`, made through the global OpenTelemetry
 * provider when tracing is on) after the function, `inngest.execution <function id>`, and adds `inngest.function.id`,
 * `inngest.run.id` and `inngest.attempt` (0-based), so a run is found by what it ran. Does nothing without tracing.
 * Source: docs/architecture.md, "Observability".
 */
export class RunSpanNames extends Middleware.BaseMiddleware {
  readonly id = "msp-crm:run-span-names";

  override async wrapFunctionHandler({ ctx, fn, next }: Middleware.WrapFunctionHandlerArgs): Promise<unknown> {
    const span = trace.getActiveSpan();
    // Only the SDK's own run span: anything else (a host's request span) keeps its name.
    if (span && (span as unknown as { name?: string }).name === "inngest.execution") {
      span.updateName(`inngest.execution ${fn.id()}`);
      span.setAttributes({
        "inngest.function.id": fn.id(),
        "inngest.run.id": ctx.runId,
        "inngest.attempt": ctx.attempt,
      });
    }
    return next();
  }
}

/**
 * Runs every function's statements under the `background` statement timeout (60 s, server/db/statement-budget.ts)
 * instead of a request's: a roll-up or a purge works through more rows than a request may, and is cancelled by the
 * database past that bound all the same (docs/architecture.md, "Budgets: what one request may cost").
 */
export class BackgroundStatements extends Middleware.BaseMiddleware {
  readonly id = "msp-crm:background-statements";

  override wrapFunctionHandler({ next }: Middleware.WrapFunctionHandlerArgs): Promise<unknown> {
    return withStatementClass("background", () => next());
  }
}

// aiMetadata off: no AI steps here, and the SDK then leaves any global OpenTelemetry provider alone.
export const inngest = new Inngest({
  id: "msp-crm",
  aiMetadata: false,
  middleware: [RunSpanNames, BackgroundStatements],
});

/**
 * An outbox row (`Event`) is ready for fan-out. Sent after the commit that recorded it, and again by the sweeper
 * while it has not been fanned out. `eventId` is `evt_…`.
 */
export const eventRecorded = eventType("crm/event.recorded", {
  schema: staticSchema<{ eventId: string; orgId: string }>(),
});

/** One delivery (`WebhookDelivery`, `whd_…`) of an event to one endpoint should be attempted. */
export const deliveryRequested = eventType("crm/webhook.delivery.requested", {
  schema: staticSchema<{ deliveryId: string; endpointId: string; orgId: string }>(),
});

/**
 * Custom fields were marked for a search re-index (`SearchReindex`, docs/architecture.md "Search"): their values
 * started or stopped counting for quick search. `orgId` names the organisation whose change asked, when one did.
 */
export const searchReindexRequested = eventType("crm/search.reindex.requested", {
  schema: staticSchema<{ orgId?: string }>(),
});

/** A replay (`WebhookReplay`, `whr_…`) should be run: its deliveries sent at most 10 a second. */
export const replayRequested = eventType("crm/webhook.replay.requested", {
  schema: staticSchema<{ replayId: string; endpointId: string; orgId: string }>(),
});
