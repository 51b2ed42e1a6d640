import type { WorkerStatus } from "../../../server/webhooks/worker";

/**
 * Says whether webhook deliveries are being made (docs/architecture.md, "Webhooks and the outbox"): a warning while no
 * worker runs this app's functions (with the events waiting and the command that starts one), a note once one does.
 */
export function WorkerBanner({ status }: { status: WorkerStatus }) {
  return (
    <div role="status" className={`alert ${status.connected ? "success" : "warning"}`} data-testid="worker-status">
      <p>{status.message}</p>
      {status.connected ? null : (
        <p>"Send test event" and "Redeliver" send at once without a worker; events from data changes need one.</p>
      )}
    </div>
  );
}
