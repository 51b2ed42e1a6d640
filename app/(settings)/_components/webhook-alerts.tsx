import type { OpenAlert } from "../../../server/webhooks/alerts";
import { Time } from "./time";

/**
 * The banner of the organisation's open webhook alerts (docs/api-contract.md §6.11), on every settings page until each
 * problem is resolved: an endpoint the service disabled (until it is enabled again) or events waiting for the worker
 * over 15 minutes (until it takes them). Owners and admins were also mailed once about each.
 */
export function WebhookAlerts({ alerts }: { alerts: OpenAlert[] }) {
  if (alerts.length === 0) return null;
  return (
    <div role="status" className="alert warning" data-testid="webhook-alerts">
      {alerts.map((alert) => (
        <p key={alert.id}>
          <strong>{alert.kind === "endpoint_disabled" ? "Webhook endpoint disabled." : "Webhooks delayed."}</strong>{" "}
          {alert.message} (<Time value={alert.openedAt} />){" "}
          <a href={alert.endpointId ? `/settings/webhooks/${alert.endpointId}` : "/settings/webhooks"}>
            {alert.endpointId ? "Open the endpoint" : "See the webhook worker's status"}
          </a>
        </p>
      ))}
    </div>
  );
}
