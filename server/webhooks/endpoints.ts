// Webhook endpoints of an organisation (docs/api-contract.md §6): what the settings area manages. Deliveries:
// webhook-deliveries.ts.
import { randomBytes } from "node:crypto";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { outsideTransaction, prisma, transaction } from "../db/transaction";
import { env } from "../env";
import { ApiError, type ErrorDetail, notFound } from "../errors";
import { type AuditActor, recordSettingsAudit } from "../identity/audit-trail/service";
import { newEventId, recordTestEvent, type WriteOrigin } from "../records/events";
import { resolveEndpointAlerts } from "./alerts";
import {
  attemptDelivery,
  type DeliveryAttemptView,
  lastAttempt,
  newDeliveryId,
  refuseTestKeySends,
} from "./deliveries";
import { toView, viewSelect, type WebhookEndpointView } from "./endpoint-view";
import { WEBHOOK_DESCRIPTION_MAX_LENGTH, WEBHOOK_ENDPOINTS_MAX, WEBHOOK_URL_MAX_LENGTH } from "./schema";
import { blockedReason } from "./ssrf";
import { checkChangedFields, checkEvents } from "./subscriptions";

/** How long the previous secret still signs (a second `v1=`) after {@link rotateWebhookSecret} (ms): 24 hours. */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** Reason recorded when a user disables an endpoint. */
export const DISABLED_BY_USER = "disabled by a user";

function newEndpointId(): string {
  return `wh_${randomBytes(12).toString("hex")}`;
}

/**
 * A new signing secret: `whsec_` + 32 random bytes in standard base64 (256 bits). The whole string keys the
 * `Service-Signature` of docs/api-contract.md §6.4; the decoded bytes key the Standard Webhooks `webhook-signature`, as
 * its libraries derive them.
 */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

// What a loopback refusal adds: the setting an operator turns on to allow it (local development and tests).
const LOOPBACK_HINT =
  "; for local development the server's operator can allow loopback addresses with WEBHOOKS_ALLOW_LOOPBACK=true";

function validationError(details: ErrorDetail[]): ApiError {
  const reasons = details.map((detail) => `${detail.path.join(".")} ${detail.message}`).join("; ");
  return new ApiError("validation_error", `The webhook endpoint is not valid: ${reasons}`, { details });
}

function checkUrl(value: unknown, details: ErrorDetail[]): string | undefined {
  if (typeof value !== "string" || value.trim() === "") {
    details.push({ path: ["url"], message: "is required: an absolute http(s) URL" });
    return undefined;
  }
  const text = value.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    details.push({ path: ["url"], message: "must be an absolute http(s) URL" });
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    details.push({ path: ["url"], message: `must use http or https, not ${url.protocol.replace(/:$/, "")}` });
  } else if (Math.max(text.length, url.toString().length) > WEBHOOK_URL_MAX_LENGTH) {
    // The parser's normal form (percent-encoding, punycode) is what is stored and shown, so it counts too.
    details.push({ path: ["url"], message: `must be at most ${WEBHOOK_URL_MAX_LENGTH} characters` });
  } else if (url.username || url.password) {
    details.push({ path: ["url"], message: "must not carry a user name or password" });
  }
  return url.toString();
}

/**
 * Refuses a URL whose host is, or resolves to, an address webhooks may not reach (docs/architecture.md,
 * "Webhooks and the outbox"): the literal is judged as it stands, a host name by every address DNS gives for it now (it
 * is checked again at each delivery, against DNS rebinding). A name that does not resolve now is accepted; its
 * deliveries fail until it does.
 */
async function checkHost(url: string, details: ErrorDetail[]): Promise<void> {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");
  const allowLoopback = env().WEBHOOKS_ALLOW_LOOPBACK;
  // A refusal of loopback alone names the operator's setting: a developer pointing at a local receiver is stuck without it.
  const howToAllow = (address: string) =>
    !allowLoopback && blockedReason(address, { allowLoopback: true }) === null ? LOOPBACK_HINT : "";
  if (isIP(host)) {
    const reason = blockedReason(host, { allowLoopback });
    if (reason) details.push({ path: ["url"], message: `must not point at ${reason} (${host})${howToAllow(host)}` });
    return;
  }
  let addresses: string[];
  try {
    addresses = (await lookup(host, { all: true })).map((entry) => entry.address);
  } catch {
    return;
  }
  for (const address of addresses) {
    const reason = blockedReason(address, { allowLoopback });
    if (reason) {
      details.push({
        path: ["url"],
        message: `must not point at ${reason}: ${host} resolves to ${address}${howToAllow(address)}`,
      });
      return;
    }
  }
}

function checkDescription(value: unknown, details: ErrorDetail[]): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (typeof value !== "string" || value.length > WEBHOOK_DESCRIPTION_MAX_LENGTH) {
    details.push({
      path: ["description"],
      message: `must be text of at most ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters`,
    });
    return undefined;
  }
  return value.trim() === "" ? null : value.trim();
}

// The settings audit entry of a change to an endpoint, by a member in the settings or a key through /api/v1.
function audit(
  orgId: string,
  actor: AuditActor,
  action:
    | "webhookEndpoint.created"
    | "webhookEndpoint.changed"
    | "webhookEndpoint.deleted"
    | "webhookEndpoint.tested"
    | "webhookSecret.rotated"
    | "webhookSecret.revealed",
  endpoint: { id: string; url: string },
  details: Record<string, string | boolean> = {},
): Promise<void> {
  return recordSettingsAudit(orgId, actor, {
    action,
    target: `endpoint ${endpoint.url}`,
    details: { endpointId: endpoint.id, ...details },
  });
}

async function findOwned(orgId: string, id: string) {
  const row = await prisma().webhookEndpoint.findFirst({
    where: { orgId, id },
    select: { ...viewSelect, secret: true, previousSecret: true },
  });
  if (!row) throw notFound("Webhook endpoint", id);
  return row;
}

/**
 * Creates a webhook endpoint (docs/api-contract.md §6), enabled. The secret is returned here and by {@link
 * revealWebhookSecret}.
 * @param input.url absolute http(s) URL, at most 2,048 characters, without credentials; a host that is or resolves to
 *   a loopback, private, link-local or reserved address is refused (loopback allowed by `WEBHOOKS_ALLOW_LOOPBACK`).
 * @param input.events event names of docs/api-contract.md §6.1 and `<resource>.*` wildcards (duplicates dropped), or
 *   exactly `["*"]`.
 * @param input.description optional, at most 500 characters.
 * @param input.changedFields optional filter of `*.updated` events (docs/api-contract.md §6.9): null or up to 20 fields
 *   of the subscribed resources or `customFields.<key>` names.
 * @returns `{endpoint, secret}` with secret `whsec_<44 standard base64 characters, the last one `=`>`.
 * @throws ApiError `validation_error` (422) when the organisation already has {@link WEBHOOK_ENDPOINTS_MAX} endpoints.
 * @throws ApiError `validation_error` (422) with one detail per problem (`url`, `events`, `events.<i>`, `description`,
 *   `changedFields.<i>`), each named in the message too (e.g. "url must not point at a private or reserved address: hooks.lan resolves to
 *   10.0.0.5").
 * With `actor` (a member in the settings, a key through /api/v1) the settings audit trail records it in the same
 * transaction, as every change below does.
 */
export async function createWebhookEndpoint(
  orgId: string,
  input: { url: string; events: string[]; description?: string | null; changedFields?: string[] | null },
  actor?: AuditActor,
): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
  const details: ErrorDetail[] = [];
  const url = checkUrl(input.url, details);
  if (url && details.length === 0) await checkHost(url, details);
  const events = checkEvents(input.events, details);
  const description = checkDescription(input.description, details);
  const changedFields = events ? checkChangedFields(input.changedFields, events, details) : undefined;
  if (details.length > 0 || !url || !events || !changedFields) throw validationError(details);
  const secret = newSecret();
  const row = await transaction(async (tx) => {
    // Creations of one organisation take turns, so two at once cannot both pass the count.
    await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook-endpoints:${orgId}`}, 0))::text`;
    if ((await tx.webhookEndpoint.count({ where: { orgId } })) >= WEBHOOK_ENDPOINTS_MAX) {
      throw new ApiError(
        "validation_error",
        `An organisation has at most ${WEBHOOK_ENDPOINTS_MAX} webhook endpoints; delete one to add another`,
        { details: [{ path: [], message: `the organisation already has ${WEBHOOK_ENDPOINTS_MAX} webhook endpoints` }] },
      );
    }
    const created = await tx.webhookEndpoint.create({
      data: { id: newEndpointId(), orgId, url, events, changedFields, description: description ?? null, secret },
      select: viewSelect,
    });
    if (actor) await audit(orgId, actor, "webhookEndpoint.created", created, { events: created.events.join(" ") });
    return created;
  });
  return { endpoint: toView(row), secret };
}

/** The organisation's endpoints, newest first (`createdAt` desc, then id). */
export async function listWebhookEndpoints(orgId: string): Promise<WebhookEndpointView[]> {
  const rows = await prisma().webhookEndpoint.findMany({
    where: { orgId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: viewSelect,
  });
  const now = new Date();
  return rows.map((row) => toView(row, now));
}

/**
 * One endpoint of the organisation.
 * @throws ApiError `not_found` (404) when missing or owned by another organisation.
 */
export async function getWebhookEndpoint(orgId: string, id: string): Promise<WebhookEndpointView> {
  const { secret: _secret, previousSecret: _previous, ...row } = await findOwned(orgId, id);
  return toView(row);
}

/**
 * The endpoint's current signing secret, and until when the previous one (after a rotation) still signs.
 * @throws ApiError `not_found` (404).
 */
export async function revealWebhookSecret(
  orgId: string,
  id: string,
  actor?: AuditActor,
): Promise<{ secret: string; previousSecretExpiresAt: Date | null }> {
  const row = await findOwned(orgId, id);
  if (actor) await audit(orgId, actor, "webhookSecret.revealed", row);
  return { secret: row.secret, previousSecretExpiresAt: toView(row).previousSecretExpiresAt };
}

/**
 * Changes an endpoint's URL, subscribed events, description (`null` or `""` clears it) or `changedFields` filter (`null`
 * or `[]` removes it); fields left out keep their value. The filter is checked against the subscription as it will be
 * (a filter naming a field of a resource no longer subscribed is refused). The secret and the enabled state are
 * unchanged.
 * @throws ApiError `not_found` (404); `validation_error` (422) as {@link createWebhookEndpoint}.
 */
export async function updateWebhookEndpoint(
  orgId: string,
  id: string,
  input: { url?: string; events?: string[]; description?: string | null; changedFields?: string[] | null },
  actor?: AuditActor,
): Promise<WebhookEndpointView> {
  const current = await findOwned(orgId, id);
  const details: ErrorDetail[] = [];
  const url = input.url === undefined ? undefined : checkUrl(input.url, details);
  if (url && details.length === 0) await checkHost(url, details);
  const events = input.events === undefined ? undefined : checkEvents(input.events, details);
  const description = checkDescription(input.description, details);
  const changedFields =
    input.changedFields === undefined && events === undefined
      ? undefined
      : checkChangedFields(
          input.changedFields === undefined ? current.changedFields : input.changedFields,
          events ?? current.events,
          details,
        );
  if (details.length > 0) throw validationError(details);
  const row = await transaction(async (tx) => {
    const updated = await tx.webhookEndpoint.update({
      where: { id, orgId },
      data: { url, events, description, changedFields },
      select: viewSelect,
    });
    if (actor) await audit(orgId, actor, "webhookEndpoint.changed", updated, { events: updated.events.join(" ") });
    return updated;
  });
  return toView(row);
}

/**
 * Enables or disables an endpoint. Enabling clears `disabledReason`/`disabledAt`, resets `consecutiveFailures` to
 * 0 and resolves its open alert; deliveries recorded while it was disabled are not sent (a replay with `missing`
 * sends them). Disabling records the reason "disabled by a user".
 * @throws ApiError `not_found` (404).
 */
export async function setWebhookEndpointEnabled(
  orgId: string,
  id: string,
  enabled: boolean,
  actor?: AuditActor,
): Promise<WebhookEndpointView> {
  const current = await findOwned(orgId, id);
  if (current.enabled === enabled) return toView(current);
  const row = await transaction(async (tx) => {
    const updated = await tx.webhookEndpoint.update({
      where: { id, orgId },
      data: enabled
        ? { enabled: true, disabledReason: null, disabledAt: null, consecutiveFailures: 0 }
        : { enabled: false, disabledReason: DISABLED_BY_USER, disabledAt: new Date() },
      select: viewSelect,
    });
    if (actor) await audit(orgId, actor, "webhookEndpoint.changed", updated, { enabled });
    // The problem the alert told of is over: its banner goes (docs/api-contract.md §6.11).
    if (enabled) await resolveEndpointAlerts(orgId, id);
    return updated;
  });
  return toView(row);
}

/**
 * Replaces the signing secret. The old one keeps signing for 24 hours ({@link SECRET_ROTATION_OVERLAP_MS}): every
 * delivery then carries two `v1=` values, so receivers can switch without losing deliveries. A second rotation within
 * those 24 h drops the oldest secret at once.
 * @returns the new secret and when the previous one stops signing.
 * @throws ApiError `not_found` (404).
 */
export async function rotateWebhookSecret(
  orgId: string,
  id: string,
  actor?: AuditActor,
): Promise<{ secret: string; previousSecretExpiresAt: Date }> {
  const current = await findOwned(orgId, id);
  const secret = newSecret();
  const previousSecretExpiresAt = new Date(Date.now() + SECRET_ROTATION_OVERLAP_MS);
  await transaction(async (tx) => {
    await tx.webhookEndpoint.update({
      where: { id, orgId },
      data: { secret, previousSecret: current.secret, previousSecretExpiresAt },
    });
    if (actor) await audit(orgId, actor, "webhookSecret.rotated", current);
  });
  return { secret, previousSecretExpiresAt };
}

/**
 * Deletes an endpoint with its deliveries and their attempts.
 * @throws ApiError `not_found` (404).
 */
export async function deleteWebhookEndpoint(orgId: string, id: string, actor?: AuditActor): Promise<void> {
  await transaction(async (tx) => {
    const endpoint = await tx.webhookEndpoint.findFirst({ where: { orgId, id }, select: { id: true, url: true } });
    const { count } = await tx.webhookEndpoint.deleteMany({ where: { orgId, id } });
    if (count === 0 || !endpoint) throw notFound("Webhook endpoint", id);
    if (actor) await audit(orgId, actor, "webhookEndpoint.deleted", endpoint);
  });
}

/**
 * Sends a test event to one endpoint now, whatever its subscriptions and enabled state, without Inngest: records an
 * `Event` named `webhook.test` (`recordTestEvent`, data `{message, endpointId}`, marked fanned out so fan-out and
 * the sweeper ignore it), one `WebhookDelivery`, and makes ONE signed attempt (awaited, at most 10 s), recorded like
 * any attempt. A 2xx resets the endpoint's failure count; a 410 disables it; other failures do not count.
 * `origin` names the actor the event carries: the settings user or the API key; a test key is refused
 * (docs/api-contract.md §5.6). Runs outside any transaction: the event and its delivery commit first, then the attempt
 * waits for the receiver holding no database connection.
 * @returns `{eventId, deliveryId, success, responseStatus, attempt}` (responseStatus null when no answer came).
 * @throws ApiError `insufficient_scope` (403) for a test key; `not_found` (404).
 */
export async function sendTestEvent(
  orgId: string,
  endpointId: string,
  origin: WriteOrigin = { isTest: false },
  actor?: AuditActor,
): Promise<{
  eventId: string;
  deliveryId: string;
  success: boolean;
  responseStatus: number | null;
  attempt: DeliveryAttemptView;
}> {
  refuseTestKeySends(origin);
  const endpoint = await findOwned(orgId, endpointId);
  const now = new Date();
  const eventId = newEventId(now);
  const deliveryId = newDeliveryId();
  // Off any request transaction: the attempt below must see these rows committed and may take seconds. The event row
  // exists once its transaction has committed (events are written at commit), so its delivery follows in another.
  await outsideTransaction(async () => {
    await transaction(async (tx) => {
      await recordTestEvent(tx, orgId, origin, {
        id: eventId,
        at: now,
        data: { message: "Test event sent from the settings area", endpointId },
      });
      if (actor) await audit(orgId, actor, "webhookEndpoint.tested", endpoint, { eventId });
    });
    await prisma().webhookDelivery.create({ data: { id: deliveryId, orgId, endpointId, eventId } });
  });
  const result = await attemptDelivery(deliveryId, { mode: "single" });
  return {
    eventId,
    deliveryId,
    success: result.success,
    responseStatus: result.responseStatus,
    attempt: await lastAttempt(deliveryId),
  };
}
