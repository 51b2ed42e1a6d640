import { SYNC_EXAMPLE } from "./example";

export const metadata = { title: "Keeping a copy in sync · MSP CRM API" };

/** The sync guide: a full list, then the events feed; or webhooks with the feed to fill gaps. */
export default function SyncGuidePage() {
  return (
    <>
      <h1>Keeping a copy in sync</h1>
      <p>
        A PSA, an RMM, an accounting system or an automation platform that keeps its own copy of accounts, contacts,
        deals, devices, tasks, notes and touchpoints needs two things: every change, deletions included, and proof that
        none was missed. The <strong>events feed</strong>, <code>GET /api/v1/events</code> (scope{" "}
        <code>events:read</code>), gives both.
      </p>

      <section id="steps">
        <h2>The method</h2>
        <ol>
          <li>
            <strong>List everything once</strong>: every list endpoint, following <code>nextCursor</code> until{" "}
            <code>hasMore</code> is false.
          </li>
          <li>
            <strong>Follow the feed from its start</strong>, oldest first, and apply each event in order: when{" "}
            <code>data.deleted</code> is <code>true</code> the event is a tombstone and the record is gone (hard
            deletes, including everything a forced account deletion removes); otherwise <code>data</code> is the record
            exactly as its GET returns it: store it. Replaying events older than your list is harmless: the last event
            of each record carries its newest state.
          </li>
          <li>
            <strong>
              Keep <code>nextCursor</code>
            </strong>{" "}
            (it is present on the last page too) and poll again later from it. The feed serves events in the order their
            changes committed within your organisation, numbered by <code>sequence</code>, and an event appears only
            once every earlier one has: you never miss an event, and the last event of each record carries the state its
            GET returns.
          </li>
          <li>
            Events are kept 30 days. A cursor older than that gets <code>410 cursor_expired</code>: start again at step
            1. A cursor stored before events had a <code>sequence</code> still works: the page it returns carries a
            cursor of the current format; store that one.
          </li>
        </ol>
        <p>
          Every event names its <code>actor</code> (<code>{'{type: "api_key", id}'}</code>, <code>user</code> or{" "}
          <code>system</code>): compare the id with your own key&apos;s to skip the echoes of your own writes. Updates
          carry <code>changedFields</code> and <code>previous</code>. Filter with <code>types</code> (comma-separated
          event names) or <code>resource</code>. Health scores and MRR are computed values without events: read them
          when you need them.
        </p>
      </section>

      <section id="webhooks">
        <h2>With webhooks</h2>
        <p>
          Webhooks carry the same payloads, pushed within seconds, but a receiver can be down longer than the retries
          last, and a retried delivery can arrive after a later change of the same record. Use both: apply webhook
          events as they come, and follow the feed every few minutes to fill any gap. Keep for each record the{" "}
          <code>sequence</code> of the event you applied last and skip an event with a smaller or equal one (the
          example&apos;s <code>apply</code> does): then an event applied twice, or an old one arriving late, changes
          nothing. Compare sequences only within one organisation.
        </p>
      </section>

      <section id="example">
        <h2>A complete example</h2>
        <p>
          Save as <code>sync.ts</code> and run <code>CRM_KEY=msp_… npx tsx sync.ts</code> (Node 22 or later; no
          dependency).
        </p>
        <pre>
          <code>{SYNC_EXAMPLE}</code>
        </pre>
      </section>
    </>
  );
}
