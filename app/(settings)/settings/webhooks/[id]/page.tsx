import { TRPCError } from "@trpc/server";
import { notFound } from "next/navigation";
import { EVENT_NAMES } from "../../../../../server/schemas/events";
import { ActionForm } from "../../../_components/action-form";
import { ConfirmAction } from "../../../_components/confirm-action";
import { Time } from "../../../_components/time";
import { WorkerBanner } from "../../../_components/worker-banner";
import { formatDuration } from "../../../_lib/format";
import { requireMember, settingsCaller } from "../../../_lib/session";
import {
  deleteEndpointAction,
  redeliverAction,
  revealSecretAction,
  rotateSecretAction,
  sendTestAction,
  setEnabledAction,
  updateEndpointAction,
} from "../actions";
import { WebhookForm } from "../webhook-form";

export const metadata = { title: "Webhook endpoint · Settings" };

/**
 * One webhook endpoint (docs/api-contract.md §6): status, test event, enable/disable, signing secret (reveal, rotate),
 * edit, delivery log with redeliver, delete. Another organisation's endpoint is "not found".
 */
export default async function EndpointPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { id } = await params;
  const me = await requireMember(`/settings/webhooks/${id}`);
  const manage = me.permissions["webhook:manage"];
  const cursorParam = (await searchParams).cursor;
  const cursor = typeof cursorParam === "string" && cursorParam ? cursorParam : undefined;
  const caller = await settingsCaller();
  let endpoint: Awaited<ReturnType<typeof caller.webhooks.get>>;
  try {
    endpoint = await caller.webhooks.get({ id });
  } catch (error) {
    if (error instanceof TRPCError && (error.code === "NOT_FOUND" || error.code === "BAD_REQUEST")) notFound();
    throw error;
  }
  const [log, worker, waiting] = await Promise.all([
    caller.webhooks
      .deliveries({ endpointId: id, cursor, limit: 25 })
      .catch(() => ({ data: [], hasMore: false, nextCursor: null })),
    caller.webhooks.worker(),
    caller.webhooks.waiting({ id }),
  ]);
  const newestAttemptOfDelivery = new Set<string>();

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

      <section aria-labelledby="deliveries-heading">
        <h2 id="deliveries-heading">Delivery log</h2>
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
        {log.data.length === 0 ? (
          <p data-testid="deliveries-empty">No deliveries yet. Send a test event to try the endpoint.</p>
        ) : (
          <div className="table-wrap">
            <table data-testid="deliveries">
              <caption className="visually-hidden">Delivery attempts, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Event</th>
                  <th scope="col">Attempt</th>
                  <th scope="col">Status</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Redeliver</th>
                </tr>
              </thead>
              <tbody>
                {log.data.map((attempt) => {
                  const newest = !newestAttemptOfDelivery.has(attempt.deliveryId);
                  newestAttemptOfDelivery.add(attempt.deliveryId);
                  return (
                    <tr key={attempt.attemptId}>
                      <td className="nowrap">
                        <Time value={attempt.startedAt} />
                      </td>
                      <td>
                        <code>{attempt.event}</code>
                        <div className="muted">
                          <code>{attempt.eventId}</code>
                        </div>
                      </td>
                      <td className="num">{attempt.attempt}</td>
                      <td>
                        <span className={`badge ${attempt.success ? "ok" : "error"}`}>
                          {attempt.responseStatus ?? "no answer"}
                        </span>
                        {attempt.error ? <div className="muted">{attempt.error}</div> : null}
                      </td>
                      <td className="num nowrap">{formatDuration(attempt.durationMs)}</td>
                      <td>
                        {/* Rendered on every row so a result stays where it was asked for once a newer attempt
                            takes over the button. */}
                        <ActionForm
                          action={redeliverAction}
                          submitLabel="Redeliver"
                          pendingLabel="Sending…"
                          buttonClassName="secondary"
                          showButton={newest && manage}
                        >
                          <input type="hidden" name="deliveryId" value={attempt.deliveryId} />
                          <input type="hidden" name="endpointId" value={endpoint.id} />
                        </ActionForm>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        <nav className="pager" aria-label="Delivery log pages">
          {cursor ? <a href={`/settings/webhooks/${endpoint.id}`}>Newest attempts</a> : null}
          {log.hasMore && log.nextCursor ? (
            <a href={`/settings/webhooks/${endpoint.id}?cursor=${encodeURIComponent(log.nextCursor)}`}>
              Older attempts →
            </a>
          ) : null}
        </nav>
      </section>

      {manage ? (
        <>
          <section aria-labelledby="edit-heading">
            <h2 id="edit-heading">Edit</h2>
            <WebhookForm
              action={updateEndpointAction}
              eventNames={EVENT_NAMES}
              initial={{ url: endpoint.url, description: endpoint.description, events: endpoint.events }}
              endpointId={endpoint.id}
              submitLabel="Save changes"
              idPrefix="edit-endpoint"
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
