import { TRPCError } from "@trpc/server";
import { notFound } from "next/navigation";
import { env } from "../../../../../server/env";
import { EVENT_NAMES, EVENT_RESOURCES, TEST_EVENT_NAME } from "../../../../../server/platform/events-feed/schema";
import { settingsErrorMessage } from "../../../../../server/settings/trpc";
import { ActionForm } from "../../../_components/action-form";
import { AutoRefresh } from "../../../_components/auto-refresh";
import { ConfirmAction } from "../../../_components/confirm-action";
import { Time } from "../../../_components/time";
import { WorkerBanner } from "../../../_components/worker-banner";
import { formatDuration } from "../../../_lib/format";
import { requireMember, settingsCaller } from "../../../_lib/session";
import {
  cancelReplayAction,
  countReplayAction,
  deleteEndpointAction,
  redeliverAction,
  revealSecretAction,
  rotateSecretAction,
  sendTestAction,
  setEnabledAction,
  startReplayAction,
  updateEndpointAction,
} from "../actions";
import { WebhookForm } from "../webhook-form";
import { STATE_LABELS, stateBadge } from "./delivery-state";
import { DeliveryStats, RANGE_LABELS } from "./delivery-stats";
import { ReplayForm } from "./replay-form";

export const metadata = { title: "Webhook endpoint · Settings" };

type Params = Record<string, string | string[] | undefined>;
const one = (value: string | string[] | undefined) => (typeof value === "string" ? value : "");
const STATES = ["succeeded", "failed", "pending"] as const;
const TRIGGER_LABELS = { scheduled: "", manual: "redelivery", test: "test", replay: "replay" } as const;

/** `YYYY-MM-DDTHH:MM` of a time in UTC, for a `datetime-local` field that the form labels UTC. */
function localUtc(date: Date): string {
  return date.toISOString().slice(0, 16);
}

/**
 * One webhook endpoint (docs/api-contract.md §6; docs/architecture.md, "Webhooks and the outbox"): status, test event,
 * enable/disable, delivery statistics over a range, "Replay failed since…" with its count and progress, the deliveries
 * (by state and event, keyset-paged, each with its attempts on its own page, and redeliver), signing secret (reveal,
 * rotate), edit, delete. Filters and ranges are plain GET forms, so the page works without JavaScript. Another
 * organisation's endpoint is "not found".
 */
export default async function EndpointPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Params>;
}) {
  const { id } = await params;
  const me = await requireMember(`/settings/webhooks/${id}`);
  const manage = me.permissions["webhook:manage"];
  const query = await searchParams;
  const range = (
    Object.keys(RANGE_LABELS).includes(one(query.range)) ? one(query.range) : "24h"
  ) as keyof typeof RANGE_LABELS;
  const from = one(query.from);
  const to = one(query.to);
  const status = (STATES as readonly string[]).includes(one(query.status))
    ? (one(query.status) as (typeof STATES)[number])
    : undefined;
  const eventFilter = one(query.event);
  const cursor = one(query.cursor) || undefined;
  const caller = await settingsCaller();
  let endpoint: Awaited<ReturnType<typeof caller.webhooks.get>>;
  try {
    endpoint = await caller.webhooks.get({ id });
  } catch (error) {
    if (error instanceof TRPCError && (error.code === "NOT_FOUND" || error.code === "BAD_REQUEST")) notFound();
    throw error;
  }
  const statsInput =
    range === "custom"
      ? { id, range, from: from ? `${from}T00:00:00Z` : undefined, to: to ? `${to}T00:00:00Z` : undefined }
      : { id, range };
  const [stats, deliveries, worker, waiting, replays] = await Promise.all([
    caller.webhooks.stats(statsInput).then(
      (value) => ({ value, error: null }),
      (error: unknown) => ({ value: null, error: settingsErrorMessage(error) }),
    ),
    caller.webhooks.deliveryList({ id, status, event: eventFilter || undefined, cursor, limit: 25 }).then(
      (value) => ({ value, error: null }),
      (error: unknown) => ({
        value: { data: [], hasMore: false, nextCursor: null },
        error: settingsErrorMessage(error),
      }),
    ),
    caller.webhooks.worker(),
    caller.webhooks.waiting({ id }),
    caller.webhooks.replays({ id }),
  ]);
  const running = replays.some((replay) => replay.status === "running");
  const keep = (extra: Record<string, string | undefined>) => {
    const values = { range, from, to, status: status ?? "", event: eventFilter, ...extra };
    const search = new URLSearchParams(
      Object.entries(values).filter((entry): entry is [string, string] => Boolean(entry[1])),
    ).toString();
    return `/settings/webhooks/${endpoint.id}${search ? `?${search}` : ""}`;
  };
  const hidden = (names: string[]) =>
    names.map((name) => {
      const value = { range, from, to, status: status ?? "", event: eventFilter }[name];
      return value ? <input key={name} type="hidden" name={name} value={value} /> : null;
    });
  const defaultSince = localUtc(endpoint.disabledAt ?? new Date(Date.now() - 24 * 3_600_000));

  return (
    <>
      <p>
        <a href="/settings/webhooks">← All endpoints</a>
      </p>
      <h1>
        Endpoint <code>{endpoint.url}</code>
      </h1>
      {endpoint.description ? <p>{endpoint.description}</p> : null}
      <p data-testid="endpoint-status">
        {endpoint.enabled ? (
          <span className="badge ok">enabled</span>
        ) : (
          <>
            <span className="badge error">disabled</span> {endpoint.disabledReason}
            {endpoint.disabledAt ? (
              <>
                {" "}
                (since <Time value={endpoint.disabledAt} />)
              </>
            ) : null}
          </>
        )}
        {endpoint.consecutiveFailures > 0 ? ` · ${endpoint.consecutiveFailures} failed deliveries in a row` : ""}
      </p>
      <p className="muted">
        Receives{" "}
        {endpoint.events.includes("*") ? (
          "every event"
        ) : (
          <code data-testid="subscribed-events">{endpoint.events.join(", ")}</code>
        )}
        {endpoint.changedFields ? (
          <>
            ; updates only when they change{" "}
            <span data-testid="changed-fields">{endpoint.changedFields.join(", ")}</span>
          </>
        ) : null}
        .
      </p>

      {manage ? null : (
        <p className="muted" data-testid="read-only-note">
          Your role ({me.role}) can see this endpoint and its deliveries; owners, admins and developers change it.
        </p>
      )}
      {manage ? (
        <div className="actions">
          <ActionForm action={sendTestAction} submitLabel="Send test event" pendingLabel="Sending…">
            <input type="hidden" name="id" value={endpoint.id} />
          </ActionForm>
          <ActionForm
            action={setEnabledAction}
            submitLabel={endpoint.enabled ? "Disable endpoint" : "Enable endpoint"}
            buttonClassName="secondary"
          >
            <input type="hidden" name="id" value={endpoint.id} />
            <input type="hidden" name="enabled" value={endpoint.enabled ? "false" : "true"} />
          </ActionForm>
        </div>
      ) : null}

      <section aria-labelledby="stats-heading">
        <h2 id="stats-heading">Delivery statistics</h2>
        <form method="get" className="filters" aria-label="Range of the statistics">
          <div className="field">
            <label htmlFor="stats-range">Range</label>
            <select id="stats-range" name="range" defaultValue={range}>
              {Object.entries(RANGE_LABELS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="stats-from">From (custom, UTC)</label>
            <input id="stats-from" name="from" type="date" defaultValue={from} />
          </div>
          <div className="field">
            <label htmlFor="stats-to">To (custom, UTC)</label>
            <input id="stats-to" name="to" type="date" defaultValue={to} />
          </div>
          {hidden(["status", "event"])}
          <div>
            <button type="submit" className="secondary">
              Show statistics
            </button>
          </div>
        </form>
        {stats.value ? (
          <DeliveryStats stats={stats.value} />
        ) : (
          <p role="alert" className="alert error">
            {stats.error}
          </p>
        )}
      </section>

      <section aria-labelledby="replay-heading">
        <h2 id="replay-heading">Replay failed since…</h2>
        <p>
          After an outage of your receiver, send again what failed since a time: every delivery that failed all its
          attempts and has not succeeded since, oldest first, with its event id (receivers deduplicate on it). At most
          10,000 at once, from the last {env().EVENT_RETENTION_DAYS} days of events.
        </p>
        {manage ? (
          endpoint.enabled ? (
            <ReplayForm
              endpointId={endpoint.id}
              defaultSince={defaultSince}
              countAction={countReplayAction}
              startAction={startReplayAction}
            />
          ) : (
            <p className="hint" data-testid="replay-needs-enabled">
              Enable the endpoint first: a replay sends nothing to a disabled endpoint.
            </p>
          )
        ) : null}
        {replays.length > 0 ? (
          <div className="table-wrap">
            <table data-testid="replays">
              <caption>Replays, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Window</th>
                  <th scope="col">Status</th>
                  <th scope="col">Progress</th>
                  <th scope="col">Cancel</th>
                </tr>
              </thead>
              <tbody>
                {replays.map((replay) => (
                  <tr key={replay.id}>
                    <td className="nowrap">
                      <Time value={replay.createdAt} />
                    </td>
                    <td>
                      <Time value={replay.since} /> – <Time value={replay.until} />
                      <div className="muted">{replay.statuses.join(" and ")}</div>
                    </td>
                    <td>
                      <span
                        className={`badge ${replay.status === "completed" ? "ok" : replay.status === "running" ? "" : "warn"}`}
                      >
                        {replay.status}
                      </span>
                      {replay.reason ? <div className="muted">{replay.reason}</div> : null}
                    </td>
                    <td>
                      <progress value={replay.sent} max={Math.max(replay.matched, 1)}>
                        {replay.sent} of {replay.matched}
                      </progress>
                      <div data-testid="replay-progress">
                        {replay.sent.toLocaleString("en-GB")} of {replay.matched.toLocaleString("en-GB")} sent,{" "}
                        {replay.succeeded.toLocaleString("en-GB")} succeeded
                      </div>
                    </td>
                    <td>
                      <ActionForm
                        action={cancelReplayAction}
                        submitLabel="Cancel replay"
                        pendingLabel="Cancelling…"
                        buttonClassName="secondary"
                        showButton={manage && replay.status === "running"}
                      >
                        <input type="hidden" name="id" value={endpoint.id} />
                        <input type="hidden" name="replayId" value={replay.id} />
                      </ActionForm>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        {running ? (
          <p className="hint">
            {worker.connected
              ? "A replay is running: this page updates itself. "
              : "A replay is waiting for the webhook worker, which sends it (no worker is connected). "}
            <a href={keep({})}>Refresh</a>
            <AutoRefresh />
          </p>
        ) : null}
      </section>

      <section aria-labelledby="deliveries-heading">
        <h2 id="deliveries-heading">Deliveries</h2>
        <WorkerBanner status={worker} />
        {waiting.count > 0 ? (
          <div className="table-wrap">
            <table data-testid="waiting">
              <caption>
                Waiting for delivery: {waiting.count} event{waiting.count === 1 ? "" : "s"} not yet handed to the worker
                {worker.connected ? " (it takes them within a minute)" : " (no worker is connected)"}
                {waiting.count > waiting.data.length ? `; the newest ${waiting.data.length} are shown` : ""}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Recorded</th>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {waiting.data.map((event) => (
                  <tr key={event.eventId}>
                    <td className="nowrap">
                      <Time value={event.createdAt} />
                    </td>
                    <td>
                      <code>{event.event}</code>
                      <div className="muted">
                        <code>{event.eventId}</code>
                      </div>
                    </td>
                    <td>
                      <span className="badge">waiting</span>{" "}
                      {worker.connected ? "queued for the worker" : "no worker connected"}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <form method="get" className="filters" aria-label="Filter the deliveries">
          {hidden(["range", "from", "to"])}
          <div className="field">
            <label htmlFor="filter-status">Status</label>
            <select id="filter-status" name="status" defaultValue={status ?? ""}>
              <option value="">Any status</option>
              {STATES.map((state) => (
                <option key={state} value={state}>
                  {STATE_LABELS[state]}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="filter-event">Event</label>
            <select id="filter-event" name="event" defaultValue={eventFilter}>
              <option value="">Any event</option>
              {[...EVENT_NAMES, TEST_EVENT_NAME].map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </div>
          <div>
            <button type="submit" className="secondary">
              Filter deliveries
            </button>
          </div>
        </form>
        {deliveries.error ? (
          <p role="alert" className="alert error">
            {deliveries.error}
          </p>
        ) : null}
        {deliveries.value.data.length === 0 ? (
          <p data-testid="deliveries-empty">
            {status || eventFilter
              ? "No deliveries match."
              : "No deliveries yet. Send a test event to try the endpoint."}
          </p>
        ) : (
          <div className="table-wrap">
            <table data-testid="deliveries">
              <caption className="visually-hidden">Deliveries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Made</th>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last attempt</th>
                  <th scope="col">Redeliver</th>
                </tr>
              </thead>
              <tbody>
                {deliveries.value.data.map((delivery) => (
                  <tr key={delivery.id}>
                    <td className="nowrap">
                      <a href={`/settings/webhooks/${endpoint.id}/deliveries/${delivery.id}`}>
                        <Time value={delivery.createdAt} />
                      </a>
                    </td>
                    <td>
                      <code>{delivery.event}</code>
                      <div className="muted">
                        <code>{delivery.eventId}</code>
                      </div>
                    </td>
                    <td>
                      <span className={stateBadge(delivery.status)}>{STATE_LABELS[delivery.status]}</span>
                    </td>
                    <td className="num">{delivery.attempts}</td>
                    <td>
                      {delivery.lastAttempt ? (
                        <>
                          <span className={`badge ${delivery.lastAttempt.success ? "ok" : "error"}`}>
                            {delivery.lastAttempt.responseStatus ?? "no answer"}
                          </span>{" "}
                          {formatDuration(delivery.lastAttempt.durationMs)}
                          {TRIGGER_LABELS[delivery.lastAttempt.trigger] ? (
                            <span className="badge neutral">{TRIGGER_LABELS[delivery.lastAttempt.trigger]}</span>
                          ) : null}
                          {delivery.lastAttempt.error ? (
                            <div className="muted">{delivery.lastAttempt.error}</div>
                          ) : null}
                        </>
                      ) : (
                        <span className="muted">not attempted yet</span>
                      )}
                    </td>
                    <td>
                      <ActionForm
                        action={redeliverAction}
                        submitLabel="Redeliver"
                        pendingLabel="Sending…"
                        buttonClassName="secondary"
                        showButton={manage}
                      >
                        <input type="hidden" name="deliveryId" value={delivery.id} />
                        <input type="hidden" name="endpointId" value={endpoint.id} />
                      </ActionForm>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <nav className="pager" aria-label="Delivery pages">
          {cursor ? <a href={keep({})}>Newest deliveries</a> : null}
          {deliveries.value.hasMore && deliveries.value.nextCursor ? (
            <a href={keep({ cursor: deliveries.value.nextCursor })}>Older deliveries →</a>
          ) : null}
        </nav>
      </section>

      <section aria-labelledby="secret-heading">
        <h2 id="secret-heading">Signing secret</h2>
        <p>
          Every delivery carries <code>Service-Signature: t=…,v1=…</code>, an HMAC-SHA256 of{" "}
          <code>&lt;t&gt;.&lt;raw body&gt;</code> with this secret (<a href="/docs/webhooks">verification guide</a>).
          {endpoint.previousSecretExpiresAt ? (
            <>
              {" "}
              The previous secret also signs until <Time value={endpoint.previousSecretExpiresAt} />.
            </>
          ) : null}
        </p>
        {manage ? (
          <>
            {me.recentlyAuthenticated ? null : (
              <p className="hint">
                Revealing or rotating the secret needs a sign-in within the last 15 minutes:{" "}
                <a href={`/settings/confirm?next=${encodeURIComponent(`/settings/webhooks/${endpoint.id}`)}`}>
                  confirm it's you
                </a>{" "}
                first.
              </p>
            )}
            <div className="actions">
              <ActionForm action={revealSecretAction} submitLabel="Reveal secret" buttonClassName="secondary">
                <input type="hidden" name="id" value={endpoint.id} />
              </ActionForm>
            </div>
            <ConfirmAction
              action={rotateSecretAction}
              summary="Rotate secret…"
              explanation="Issues a new secret. For 24 hours deliveries are signed with both, so you can switch your receiver without losing any."
              submitLabel="Rotate secret"
              pendingLabel="Rotating…"
            >
              <input type="hidden" name="id" value={endpoint.id} />
            </ConfirmAction>
          </>
        ) : null}
      </section>

      {manage ? (
        <>
          <section aria-labelledby="edit-heading">
            <h2 id="edit-heading">Edit</h2>
            <WebhookForm
              action={updateEndpointAction}
              eventNames={EVENT_NAMES}
              resources={EVENT_RESOURCES}
              initial={{
                url: endpoint.url,
                description: endpoint.description,
                events: endpoint.events,
                changedFields: endpoint.changedFields,
              }}
              endpointId={endpoint.id}
              submitLabel="Save changes"
              idPrefix="edit-endpoint"
              allowLoopback={env().WEBHOOKS_ALLOW_LOOPBACK}
            />
          </section>

          <section aria-labelledby="delete-heading">
            <h2 id="delete-heading">Delete</h2>
            <ConfirmAction
              action={deleteEndpointAction}
              summary="Delete this endpoint…"
              explanation="Stops all deliveries to it and removes its delivery log. This cannot be undone."
              submitLabel="Delete endpoint"
              pendingLabel="Deleting…"
              danger
            >
              <input type="hidden" name="id" value={endpoint.id} />
            </ConfirmAction>
          </section>
        </>
      ) : null}
    </>
  );
}
