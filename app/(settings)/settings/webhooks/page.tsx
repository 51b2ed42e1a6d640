import { env } from "../../../../server/env";
import { EVENT_NAMES, EVENT_RESOURCES } from "../../../../server/platform/events-feed/schema";
import { Time } from "../../_components/time";
import { WorkerBanner } from "../../_components/worker-banner";
import { requireMember, settingsCaller } from "../../_lib/session";
import { createEndpointAction } from "./actions";
import { WebhookForm } from "./webhook-form";

export const metadata = { title: "Webhooks · Settings" };

/** The organisation's webhook endpoints (docs/api-contract.md §6): register one, see each one's status. */
export default async function WebhooksPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const me = await requireMember("/settings/webhooks");
  const params = await searchParams;
  const caller = await settingsCaller();
  const [endpoints, worker, health] = await Promise.all([
    caller.webhooks.list(),
    caller.webhooks.worker(),
    caller.webhooks.health(),
  ]);
  return (
    <>
      <h1>Webhook endpoints</h1>
      <p>
        When data changes, the service POSTs the event to every enabled endpoint subscribed to it, signed with the
        endpoint's secret in <code>Service-Signature</code> (<a href="/docs/webhooks">how to verify it</a>). A failed
        delivery is retried up to 5 attempts; an endpoint whose deliveries fail 5 times in a row is disabled, and owners
        and admins are mailed about it. Changes made with test keys are never delivered.
      </p>
      <WorkerBanner status={worker} />
      {params.deleted ? (
        <p role="status" className="alert success">
          Endpoint deleted.
        </p>
      ) : null}

      <section aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading">Your endpoints ({endpoints.length})</h2>
        {endpoints.length === 0 ? (
          <p>No endpoints yet. Register one below.</p>
        ) : (
          <div className="table-wrap">
            <table data-testid="endpoints">
              <caption className="visually-hidden">Webhook endpoints</caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Status</th>
                  <th scope="col">Last 24 h</th>
                  <th scope="col">Last failure</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {endpoints.map((endpoint) => (
                  <tr key={endpoint.id}>
                    <td>
                      <a href={`/settings/webhooks/${endpoint.id}`}>{endpoint.url}</a>
                      {endpoint.description ? <div className="muted">{endpoint.description}</div> : null}
                    </td>
                    <td>
                      {endpoint.events.includes("*") ? (
                        "all events"
                      ) : (
                        <ul className="scope-list">
                          {endpoint.events.map((name) => (
                            <li key={name}>
                              <code>{name}</code>
                            </li>
                          ))}
                        </ul>
                      )}
                      {endpoint.changedFields ? (
                        <div className="muted">updates of {endpoint.changedFields.join(", ")} only</div>
                      ) : null}
                    </td>
                    <td>
                      {endpoint.enabled ? (
                        <span className="badge ok">enabled</span>
                      ) : (
                        <>
                          <span className="badge error">disabled</span>
                          <div className="muted">{endpoint.disabledReason}</div>
                        </>
                      )}
                      {endpoint.consecutiveFailures > 0 ? (
                        <div className="muted">{endpoint.consecutiveFailures} failed deliveries in a row</div>
                      ) : null}
                    </td>
                    <td data-testid="success-rate">
                      {health[endpoint.id]?.successRate != null ? (
                        <>
                          {health[endpoint.id]?.successRate} % succeeded
                          <div className="muted">
                            {health[endpoint.id]?.succeeded} of{" "}
                            {(health[endpoint.id]?.succeeded ?? 0) + (health[endpoint.id]?.failed ?? 0)} deliveries
                          </div>
                        </>
                      ) : (
                        <span className="muted">no finished deliveries</span>
                      )}
                    </td>
                    <td data-testid="last-failure">
                      {health[endpoint.id]?.lastFailure ? (
                        <>
                          <Time value={health[endpoint.id]?.lastFailure?.at} />
                          <div className="muted">
                            {health[endpoint.id]?.lastFailure?.error ??
                              `HTTP ${health[endpoint.id]?.lastFailure?.responseStatus}`}
                          </div>
                        </>
                      ) : (
                        <span className="muted">none</span>
                      )}
                    </td>
                    <td className="nowrap">
                      <Time value={endpoint.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      {me.permissions["webhook:manage"] ? (
        <section aria-labelledby="new-endpoint-heading">
          <h2 id="new-endpoint-heading">Register an endpoint</h2>
          <WebhookForm
            action={createEndpointAction}
            eventNames={EVENT_NAMES}
            resources={EVENT_RESOURCES}
            submitLabel="Register endpoint"
            idPrefix="new-endpoint"
            allowLoopback={env().WEBHOOKS_ALLOW_LOOPBACK}
          />
        </section>
      ) : (
        <p className="muted" data-testid="read-only-note">
          Your role ({me.role}) can see endpoints and their deliveries; owners, admins and developers change them.
        </p>
      )}
    </>
  );
}
