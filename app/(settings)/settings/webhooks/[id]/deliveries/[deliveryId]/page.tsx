import { TRPCError } from "@trpc/server";
import { notFound } from "next/navigation";
import { ActionForm } from "../../../../../_components/action-form";
import { Time } from "../../../../../_components/time";
import { formatDuration, formatRelativeFuture } from "../../../../../_lib/format";
import { requireMember, settingsCaller } from "../../../../../_lib/session";
import { redeliverAction } from "../../../actions";
import { STATE_LABELS, stateBadge } from "../../delivery-state";

export const metadata = { title: "Webhook delivery · Settings" };

const TRIGGER_WORDS = {
  scheduled: "retry schedule",
  manual: "redelivery",
  test: "test event",
  replay: "replay",
} as const;

/**
 * One delivery of an endpoint with every attempt in full (docs/architecture.md, "Webhooks and the outbox"): the body
 * every attempt sends and where the next one goes, and per attempt the URL it was sent to (the endpoint's URL then),
 * the headers with the signatures left out, the answer's status, the first 2,048 characters of its body, the
 * duration, the error, what made it, and when the next retry runs. Another organisation's delivery, or one of another
 * endpoint, is "not found".
 */
export default async function DeliveryPage({ params }: { params: Promise<{ id: string; deliveryId: string }> }) {
  const { id, deliveryId } = await params;
  const me = await requireMember(`/settings/webhooks/${id}/deliveries/${deliveryId}`);
  const caller = await settingsCaller();
  let delivery: Awaited<ReturnType<typeof caller.webhooks.delivery>>;
  try {
    delivery = await caller.webhooks.delivery({ deliveryId });
  } catch (error) {
    if (error instanceof TRPCError && (error.code === "NOT_FOUND" || error.code === "BAD_REQUEST")) notFound();
    throw error;
  }
  if (delivery.endpointId !== id) notFound();
  return (
    <>
      <p>
        <a href={`/settings/webhooks/${id}`}>← The endpoint</a>
      </p>
      <h1>
        Delivery <code>{delivery.id}</code>
      </h1>
      <dl className="meta" data-testid="delivery-summary">
        <dt>Event</dt>
        <dd>
          <code>{delivery.event}</code> <code>{delivery.eventId}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <span className={stateBadge(delivery.status)}>{STATE_LABELS[delivery.status]}</span> after{" "}
          {delivery.attemptCount} attempt{delivery.attemptCount === 1 ? "" : "s"}
        </dd>
        <dt>Made</dt>
        <dd>
          <Time value={delivery.createdAt} />
        </dd>
        <dt>Next retry</dt>
        <dd data-testid="next-retry">
          {delivery.nextRetryAt ? (
            <>
              <Time value={delivery.nextRetryAt} /> (about {formatRelativeFuture(delivery.nextRetryAt)})
            </>
          ) : delivery.status === "pending" && delivery.attemptCount === 0 ? (
            "waiting for the webhook worker"
          ) : (
            "none"
          )}
        </dd>
      </dl>
      {me.permissions["webhook:manage"] ? (
        <ActionForm
          action={redeliverAction}
          submitLabel="Redeliver"
          pendingLabel="Sending…"
          buttonClassName="secondary"
        >
          <input type="hidden" name="deliveryId" value={delivery.id} />
          <input type="hidden" name="endpointId" value={id} />
        </ActionForm>
      ) : null}

      <section aria-labelledby="request-heading">
        <h2 id="request-heading">Request</h2>
        <p>
          Next attempt: <code data-testid="next-url">POST {delivery.url}</code>
        </p>
        <p className="hint">
          Every attempt sends this body, exactly these bytes (the ones signed), to the endpoint's URL of its moment
          (under the attempt); each attempt is signed anew at its start (its headers are under the attempt). Signatures
          are HMACs of the signing secret and are not shown.
        </p>
        <pre className="wrap" data-testid="request-body">
          {delivery.requestBody}
        </pre>
      </section>

      <section aria-labelledby="attempts-heading">
        <h2 id="attempts-heading">Attempts, newest first</h2>
        {delivery.attempts.length === 0 ? <p>No attempt yet.</p> : null}
        <ol className="key-list" reversed data-testid="attempts">
          {delivery.attempts.map((attempt) => (
            <li key={attempt.attemptId}>
              <h3>
                Attempt {attempt.attempt}{" "}
                <span className={`badge ${attempt.success ? "ok" : "error"}`}>
                  {attempt.responseStatus ?? "no answer"}
                </span>
              </h3>
              <dl className="meta">
                <dt>Sent to</dt>
                <dd className="breakable" data-testid="attempt-url">
                  {attempt.url === null ? (
                    "not recorded (an attempt made before URLs were kept)"
                  ) : (
                    <code>POST {attempt.url}</code>
                  )}
                </dd>
                <dt>Started</dt>
                <dd>
                  <Time value={attempt.startedAt} />
                </dd>
                <dt>Made by</dt>
                <dd>
                  {TRIGGER_WORDS[attempt.trigger]}
                  {attempt.replayId ? (
                    <>
                      {" "}
                      <code>{attempt.replayId}</code>
                    </>
                  ) : null}
                </dd>
                <dt>Duration</dt>
                <dd>{formatDuration(attempt.durationMs)}</dd>
                <dt>Error</dt>
                <dd>{attempt.error ?? "none"}</dd>
              </dl>
              <details>
                <summary>Request headers</summary>
                <div className="table-wrap">
                  <table>
                    <caption className="visually-hidden">Headers of attempt {attempt.attempt}</caption>
                    <tbody>
                      {attempt.requestHeaders.map(([name, value]) => (
                        <tr key={name}>
                          <th scope="row">
                            <code>{name}</code>
                          </th>
                          <td className="breakable">
                            <code>{value}</code>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </details>
              <details open={!attempt.success}>
                <summary>Response body (first 2,048 characters)</summary>
                <pre>{attempt.responseBody === null ? "(no answer)" : attempt.responseBody || "(empty)"}</pre>
              </details>
            </li>
          ))}
        </ol>
      </section>
    </>
  );
}
