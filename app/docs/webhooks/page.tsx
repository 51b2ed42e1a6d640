import { EVENT_NAMES } from "../../../server/platform/events-feed/schema";
import {
  DELIVERY_FACTS,
  EXAMPLE_PAYLOAD,
  RETRY_SCHEDULE,
  VERIFY_SNIPPET,
} from "../../../server/webhooks/receiver-docs";

export const metadata = { title: "Webhooks guide · MSP CRM API" };

const HEADERS: ReadonlyArray<[string, string]> = [
  [
    "Service-Signature",
    "t=<unix seconds>,v1=<hex HMAC-SHA256>. One v1= per valid secret: two for 24 hours after a secret rotation.",
  ],
  ["Service-Event", "The event name, e.g. deal.closed_won."],
  ["Service-Event-Id", "The event id (evt_<unix_seconds>_<token>), the same on every retry and redelivery."],
  ["Content-Type", "application/json"],
  ["User-Agent", "Service-Webhooks/1.1"],
  ["webhook-id", "Standard Webhooks: the event id, as in Service-Event-Id."],
  ["webhook-timestamp", "Standard Webhooks: Unix seconds of the attempt."],
  [
    "webhook-signature",
    "Standard Webhooks: v1,<base64 HMAC-SHA256 of <webhook-id>.<webhook-timestamp>.<raw body>>, keyed with the base64-decoded part of the secret after whsec_; space-separated, two for 24 hours after a rotation. Verify with any standardwebhooks library: new Webhook(secret).verify(body, headers).",
  ],
  [
    "X-MSP-Signature, X-MSP-Timestamp",
    "Legacy and deprecated: hex HMAC-SHA256 of the raw body only (current secret), and the Unix time of the attempt. Verify Service-Signature instead.",
  ],
];

/**
 * The receiver guide (docs/api-contract.md §6): payload, headers, signature verification, retries and the disable rule.
 */
export default function WebhooksGuidePage() {
  return (
    <>
      <h1>Webhooks guide</h1>
      <p>
        When data changes, the service POSTs a JSON event to every enabled endpoint of your organisation that subscribes
        to it (or to <code>*</code>). Endpoints, their signing secrets, a test event and the delivery history are in the
        settings area. Changes made with a test key (<code>msp_test_…</code>) are stored but never delivered.
      </p>

      <section id="events">
        <h2>Events</h2>
        <p>{EVENT_NAMES.join(", ")}.</p>
        <p>
          The settings area&apos;s <strong>Send test event</strong> sends <code>webhook.test</code> with data{" "}
          <code>{"{message, endpointId}"}</code> to one endpoint, whatever it subscribes to. Accept and ignore event
          names you do not know.
        </p>
      </section>

      <section id="payload">
        <h2>Payload</h2>
        <p>
          <code>id</code> (use it to deduplicate), <code>event</code>, <code>sequence</code> (the event&apos;s position
          in your organisation&apos;s events feed, increasing in the order the changes committed),{" "}
          <code>timestamp</code> (when the change was recorded, ISO 8601 UTC), <code>orgId</code>, <code>resource</code>
          , <code>actor</code> (who made the change: <code>{'{type: "api_key", id}'}</code>, <code>user</code> or{" "}
          <code>system</code>) and <code>data</code>: the record as its GET endpoint returns it, or for a hard deletion
          a tombstone <code>{"{id, resource, deleted: true}"}</code>. A change of an existing record adds{" "}
          <code>changedFields</code> and <code>previous</code> (their old values). The events feed (
          <a href="/docs/sync">sync guide</a>) serves the same payloads.
        </p>
        <pre>
          <code>{EXAMPLE_PAYLOAD}</code>
        </pre>
      </section>

      <section id="headers">
        <h2>Headers</h2>
        <div className="table-wrap wraps">
          <table>
            <thead>
              <tr>
                <th scope="col">Header</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {HEADERS.map(([name, value]) => (
                <tr key={name}>
                  <td>
                    <code>{name}</code>
                  </td>
                  <td>{value}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>

      <section id="verify">
        <h2>Verifying the signature</h2>
        <ol>
          <li>
            Split <code>Service-Signature</code> on commas into <code>t</code> and one or more <code>v1</code>.
          </li>
          <li>
            Compute HMAC-SHA256 over <code>&lt;t&gt;.&lt;raw body&gt;</code> with the endpoint&apos;s whole signing
            secret (<code>whsec_…</code>, as shown) as the key, in lowercase hex.
          </li>
          <li>Compare it with each v1 in constant time (lengths must match); accept if one matches.</li>
          <li>Refuse the request when t is more than 300 seconds (5 minutes) away from your clock.</li>
        </ol>
        <p>Verify the body exactly as received, before parsing it: re-serialised JSON will not match. In Node:</p>
        <pre>
          <code>{VERIFY_SNIPPET}</code>
        </pre>
        <p>
          Answer with any <strong>2xx</strong> quickly, then process the event. Deliveries are at least once and may
          arrive out of order: deduplicate on <code>id</code> (or <code>Service-Event-Id</code>), and keep for each
          record the largest <code>sequence</code> you have applied: an event with a smaller one carries an older state
          (a retry that arrived after a later change) and is skipped.
        </p>
      </section>

      <section id="retries">
        <h2>Retries</h2>
        <p>
          Only a 2xx answer is a success. Any other status (redirects are not followed, so a 3xx is a failure), no
          answer within {DELIVERY_FACTS.timeout}, or a connection error fails the attempt. A failed delivery is retried
          with exponential backoff, {DELIVERY_FACTS.attempts} attempts in all, each signed afresh with the same event
          id:
        </p>
        <div className="table-wrap wraps">
          <table>
            <thead>
              <tr>
                <th scope="col">Attempt</th>
                <th scope="col">When</th>
              </tr>
            </thead>
            <tbody>
              {RETRY_SCHEDULE.map((row) => (
                <tr key={row.attempt}>
                  <td className="num">{row.attempt}</td>
                  <td>{row.after}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p>
          The settings area shows every attempt (status, duration, the first {DELIVERY_FACTS.responseBodyLimit}{" "}
          characters of your answer) and can redeliver any delivery at once, with the same event id.
        </p>
      </section>

      <section id="disabling">
        <h2>When an endpoint is disabled</h2>
        <ul>
          <li>
            After {DELIVERY_FACTS.disableAfter} consecutive failed deliveries (each having used all{" "}
            {DELIVERY_FACTS.attempts} attempts). Any successful attempt resets the count.
          </li>
          <li>
            At once when it answers <strong>410 Gone</strong>.
          </li>
          <li>When a user disables it.</li>
        </ul>
        <p>
          The reason is shown in the settings area. A disabled endpoint receives nothing, and events that happen while
          it is disabled are not sent later. Enabling it again resets the failure count.
        </p>
      </section>

      <section id="rotation">
        <h2>Rotating the secret</h2>
        <p>
          After a rotation the previous secret keeps signing for 24 hours: each delivery then carries two{" "}
          <code>v1=</code> values, one per secret, so you can switch without losing deliveries.
        </p>
      </section>

      <section id="addresses">
        <h2>Endpoint addresses</h2>
        <p>
          Endpoint URLs must be absolute http or https URLs that resolve to public addresses: loopback, private,
          link-local (including cloud metadata) and other reserved addresses are refused when the request is made. For
          local development the server's operator can allow loopback addresses (a receiver on the same machine) with{" "}
          <code>WEBHOOKS_ALLOW_LOOPBACK=true</code>; the other reserved addresses stay refused.
        </p>
      </section>
    </>
  );
}
