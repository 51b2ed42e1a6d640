// Telling an organisation when its webhooks break (docs/architecture.md, "Webhooks and the outbox"; docs/api-contract.md
// §6.11): an endpoint the service disabled after failures, or events waiting for the webhook worker longer than 15
// minutes. Each problem is one open `WebhookAlert` row (unique `openKey`), so however many processes notice it, one
// opens it; its owners and admins get one mail, and the settings show a banner until the problem is resolved.
import type { WebhookAlertKind } from "../db/generated/client";
import { outsideTransaction, prisma, type TransactionClient } from "../db/transaction";
import { env } from "../env";
import { log } from "../observability/logger";
import { mailConfigured, sendMail } from "../platform/mail";
import { UNDISPATCHED_MAX_AGE_MS } from "./worker";

/** Age of the oldest event waiting for the webhook worker past which an organisation is alerted (ms): 15 minutes. */
export const BACKLOG_ALERT_AFTER_MS = 15 * 60_000;

/** An open alert as the settings banner shows it. */
export interface OpenAlert {
  /** The row's id as a decimal string. */
  id: string;
  kind: "endpoint_disabled" | "worker_backlog";
  /** The endpoint of an `endpoint_disabled` alert; null for the backlog. */
  endpointId: string | null;
  /** What happened, in one sentence. */
  message: string;
  openedAt: Date;
}

function openKey(orgId: string, kind: WebhookAlertKind, endpointId: string | null): string {
  return `${orgId}:${kind}:${endpointId ?? "-"}`;
}

/** The origin links in mails point at: `PUBLIC_URL`, else `http://localhost:<PORT>` (a mail has no request). */
function mailOrigin(): string {
  const config = env();
  return config.PUBLIC_URL?.replace(/\/+$/, "") ?? `http://localhost:${config.PORT}`;
}

/**
 * Opens the alert of an endpoint the service disabled (5 failed deliveries in a row, or a 410 Gone), in the transaction
 * that disabled it, unless one is open already. The message names the endpoint by its id and its URL's origin: it is
 * mailed, and a URL's path and query may hold the receiver's credentials.
 * @returns the new alert's id, to mail once the transaction has committed ({@link mailAlert}); null when one was open.
 */
export async function openEndpointDisabledAlert(
  tx: TransactionClient,
  endpoint: { id: string; orgId: string; origin: string },
  reason: string,
): Promise<bigint | null> {
  const message = `The webhook endpoint ${endpoint.id} (${endpoint.origin}) was disabled: ${reason}. Nothing is delivered to it until it is enabled again.`;
  const rows = await tx.$queryRaw<Array<{ id: bigint }>>`
    INSERT INTO "WebhookAlert" ("orgId", "kind", "endpointId", "message", "openKey")
    VALUES (${endpoint.orgId}, 'ENDPOINT_DISABLED', ${endpoint.id}, ${message},
            ${openKey(endpoint.orgId, "ENDPOINT_DISABLED", endpoint.id)})
    ON CONFLICT ("openKey") DO NOTHING
    RETURNING "id"`;
  return rows[0]?.id ?? null;
}

/** Resolves the open alert of an endpoint (it was enabled again); joins the enclosing transaction. */
export async function resolveEndpointAlerts(orgId: string, endpointId: string): Promise<void> {
  await prisma().webhookAlert.updateMany({
    where: { orgId, endpointId, resolvedAt: null },
    data: { resolvedAt: new Date(), openKey: null },
  });
}

/** The organisation's open alerts, oldest first: what the settings banner lists. */
export async function openAlerts(orgId: string): Promise<OpenAlert[]> {
  const rows = await prisma().webhookAlert.findMany({
    where: { orgId, resolvedAt: null },
    orderBy: { id: "asc" },
    select: { id: true, kind: true, endpointId: true, message: true, openedAt: true },
  });
  return rows.map((row) => ({
    id: row.id.toString(),
    kind: row.kind === "ENDPOINT_DISABLED" ? "endpoint_disabled" : "worker_backlog",
    endpointId: row.endpointId,
    message: row.message,
    openedAt: row.openedAt,
  }));
}

/**
 * Sends an alert's one mail to the organisation's owners and admins, if no process has claimed it yet (the claim and
 * the mail's outcome are stored: `mailedAt`, `mailResult` `sent`, `not-configured` or `failed`). Without SMTP the
 * alert is marked `not-configured` and the banner is all there is. Never throws: a failure is logged and stored.
 * @returns the outcome, or null when the alert was already claimed (or resolved and gone).
 */
export function mailAlert(alertId: bigint): Promise<"sent" | "not-configured" | "failed" | null> {
  return outsideTransaction(async () => {
    try {
      const [alert] = await prisma().$queryRaw<
        Array<{ orgId: string; kind: WebhookAlertKind; endpointId: string | null; message: string }>
      >`
        UPDATE "WebhookAlert" SET "mailedAt" = now() AT TIME ZONE 'UTC'
        WHERE "id" = ${alertId} AND "mailedAt" IS NULL
        RETURNING "orgId", "kind", "endpointId", "message"`;
      if (!alert) return null;
      let result: "sent" | "not-configured" | "failed" = "not-configured";
      if (mailConfigured()) {
        const [org, members] = await Promise.all([
          prisma().organisation.findUnique({ where: { id: alert.orgId }, select: { name: true } }),
          prisma().member.findMany({
            where: { orgId: alert.orgId, role: { in: ["owner", "admin"] } },
            select: { user: { select: { email: true } } },
          }),
        ]);
        const to = [...new Set(members.map((member) => member.user.email))];
        if (to.length > 0) result = await sendMail(alertMail(alert, org?.name ?? "your organisation", to));
      }
      await prisma().webhookAlert.update({ where: { id: alertId }, data: { mailResult: result } });
      return result;
    } catch (error) {
      log().error({ err: error, alertId: alertId.toString() }, "webhook alert mail failed");
      return "failed";
    }
  });
}

function alertMail(
  alert: { kind: WebhookAlertKind; endpointId: string | null; message: string },
  orgName: string,
  to: string[],
) {
  const origin = mailOrigin();
  if (alert.kind === "ENDPOINT_DISABLED") {
    const page = `${origin}/settings/webhooks/${alert.endpointId}`;
    return {
      to: to.join(", "),
      subject: `[${orgName}] A webhook endpoint was disabled`,
      text: [
        alert.message,
        "",
        `Fix the receiver, then enable the endpoint and replay what failed meanwhile ("Replay failed since…"): ${page}`,
        "",
        "You are receiving this because you are an owner or admin of the organisation. This is the only mail about it; the settings show a banner until the endpoint is enabled again.",
      ].join("\n"),
    };
  }
  return {
    to: to.join(", "),
    subject: `[${orgName}] Webhook events are waiting for the worker`,
    text: [
      alert.message,
      "",
      `Check that the Inngest worker runs this app's functions (Inngest Cloud, a self-hosted Inngest server, or \`npm run inngest\` locally): ${origin}/settings/webhooks`,
      "",
      "You are receiving this because you are an owner or admin of the organisation. This is the only mail about it; the settings show a banner until the events are taken again.",
    ].join("\n"),
  };
}

/**
 * Opens and resolves the backlog alerts (docs/architecture.md, "Webhooks and the outbox"): an organisation with an
 * enabled endpoint whose oldest live event waiting for the worker (not fanned out, recorded in the last 72 h) is older
 * than {@link BACKLOG_ALERT_AFTER_MS} gets an open `WORKER_BACKLOG` alert; an open one whose events are taken again
 * (none waits that long) is resolved. Then mails every open alert not mailed yet (one whose process stopped before
 * mailing). Safe to run from every process at once: the unique `openKey` lets one of them open each alert and the mail
 * claim lets one of them mail it. Run every minute by the sweeper and by `npm start` (which alerts even while no worker
 * runs at all).
 * @returns how many alerts it opened, resolved and mailed.
 */
export function checkWebhookAlerts(now = new Date()): Promise<{ opened: number; resolved: number; mailed: number }> {
  return outsideTransaction(async () => {
    const threshold = new Date(now.getTime() - BACKLOG_ALERT_AFTER_MS);
    const horizon = new Date(now.getTime() - UNDISPATCHED_MAX_AGE_MS);
    const late = await prisma().$queryRaw<Array<{ orgId: string; oldest: Date; waiting: number }>>`
      SELECT e."orgId", min(e."createdAt") AS "oldest", count(*)::int AS "waiting"
      FROM "Event" AS e
      WHERE e."fannedOutAt" IS NULL AND e."isTest" = false AND e."createdAt" > ${horizon}
        AND e."createdAt" < ${threshold}
        AND EXISTS (SELECT 1 FROM "WebhookEndpoint" AS w WHERE w."orgId" = e."orgId" AND w."enabled")
      GROUP BY e."orgId"`;
    let opened = 0;
    for (const org of late) {
      const minutes = Math.floor((now.getTime() - org.oldest.getTime()) / 60_000);
      const message = `Webhook events have been waiting for the worker for ${minutes} minutes (${org.waiting} older than 15 minutes): nothing is delivered until a worker takes them.`;
      const rows = await prisma().$queryRaw<Array<{ id: bigint }>>`
        INSERT INTO "WebhookAlert" ("orgId", "kind", "message", "openKey")
        VALUES (${org.orgId}, 'WORKER_BACKLOG', ${message}, ${openKey(org.orgId, "WORKER_BACKLOG", null)})
        ON CONFLICT ("openKey") DO NOTHING
        RETURNING "id"`;
      opened += rows.length;
    }
    const stillLate = late.map((org) => org.orgId);
    const { count: resolved } = await prisma().webhookAlert.updateMany({
      where: { kind: "WORKER_BACKLOG", resolvedAt: null, orgId: { notIn: stillLate } },
      data: { resolvedAt: now, openKey: null },
    });
    const unmailed = await prisma().webhookAlert.findMany({
      where: { resolvedAt: null, mailedAt: null },
      select: { id: true },
      orderBy: { id: "asc" },
      take: 100,
    });
    let mailed = 0;
    for (const alert of unmailed) if ((await mailAlert(alert.id)) !== null) mailed++;
    return { opened, resolved, mailed };
  });
}

/** How often `npm start` checks the alerts (ms): every minute, like the sweeper. */
export const ALERT_CHECK_INTERVAL_MS = 60_000;

/**
 * Checks the alerts every {@link ALERT_CHECK_INTERVAL_MS} in this process ({@link checkWebhookAlerts}), so an
 * organisation is told of a backlog even when no worker runs at all (the sweeper checks them too, while one does). The
 * timer does not keep the process alive; a failed check is logged and the next one runs as planned.
 * @returns a function that stops the checks (at shutdown).
 */
export function startAlertChecks(intervalMs = ALERT_CHECK_INTERVAL_MS): () => void {
  const timer = setInterval(() => {
    checkWebhookAlerts().catch((error: unknown) => log().warn({ err: error }, "webhook alert check failed"));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
