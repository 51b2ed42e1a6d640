"use server";

import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import type { FormState } from "../../_lib/form-state";
import { formatTime } from "../../_lib/format";
import { field, fields, runAction } from "../../_lib/run-action";
import { settingsCaller } from "../../_lib/session";

const SECRET_NOTE =
  "Verify each delivery's Service-Signature with it (see the webhook verification guide). You can reveal it again on the endpoint's page.";

// "*" means every event; a form that ticks it and some names subscribes to everything.
function chosenEvents(form: FormData): string[] {
  const events = fields(form, "events");
  return events.includes("*") ? ["*"] : events;
}

// Field names typed into one box, separated by commas or white space; none means no filter.
function chosenFields(form: FormData): string[] | null {
  const names = field(form, "changedFields")
    .split(/[\s,]+/)
    .filter(Boolean);
  return names.length > 0 ? names : null;
}

function endpointPaths(id?: string): void {
  revalidatePath("/settings/webhooks");
  if (id) revalidatePath(`/settings/webhooks/${id}`);
}

/** Registers an endpoint; the signing secret is returned in the form state with a link to the endpoint's page. */
export async function createEndpointAction(_previous: FormState, form: FormData): Promise<FormState> {
  const url = field(form, "url");
  const description = field(form, "description");
  const events = chosenEvents(form);
  const changedFields = field(form, "changedFields");
  return runAction(
    async () => {
      const { endpoint, secret } = await (await settingsCaller()).webhooks.create({
        url,
        events,
        description,
        changedFields: chosenFields(form),
      });
      endpointPaths();
      return {
        status: "ok",
        message: `Endpoint ${endpoint.url} registered for ${endpoint.events.join(", ")}.`,
        reveal: { label: "Signing secret", value: secret, note: SECRET_NOTE },
        link: { href: `/settings/webhooks/${endpoint.id}`, label: "Open the endpoint: test it, see its deliveries" },
      };
    },
    { url, description, events, changedFields },
  );
}

/** Saves URL, events, description and the fields filter of the endpoint named by the form's `id`. */
export async function updateEndpointAction(_previous: FormState, form: FormData): Promise<FormState> {
  const id = field(form, "id");
  const url = field(form, "url");
  const description = field(form, "description");
  const events = chosenEvents(form);
  const changedFields = field(form, "changedFields");
  return runAction(
    async () => {
      await (await settingsCaller()).webhooks.update({
        id,
        url,
        events,
        description,
        changedFields: chosenFields(form),
      });
      endpointPaths(id);
      return { status: "ok", message: "Endpoint saved." };
    },
    { url, description, events, changedFields },
  );
}

/** Enables or disables (`enabled` = "true" | "false") the endpoint named by the form's `id`. */
export async function setEnabledAction(_previous: FormState, form: FormData): Promise<FormState> {
  const id = field(form, "id");
  const enabled = field(form, "enabled") === "true";
  return runAction(async () => {
    await (await settingsCaller()).webhooks.setEnabled({ id, enabled });
    endpointPaths(id);
    return {
      status: "ok",
      message: enabled ? "Endpoint enabled: new events are delivered again." : "Endpoint disabled.",
    };
  });
}

/** Shows the endpoint's signing secret. */
export async function revealSecretAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    const { secret, previousSecretExpiresAt } = await (await settingsCaller()).webhooks.revealSecret({
      id: field(form, "id"),
    });
    return {
      status: "ok",
      reveal: {
        label: "Signing secret",
        value: secret,
        note: previousSecretExpiresAt
          ? `The previous secret also signs deliveries until ${formatTime(previousSecretExpiresAt)}.`
          : undefined,
      },
    };
  });
}

/** Replaces the signing secret; the previous one keeps signing for 24 hours. */
export async function rotateSecretAction(_previous: FormState, form: FormData): Promise<FormState> {
  const id = field(form, "id");
  return runAction(async () => {
    const { secret, previousSecretExpiresAt } = await (await settingsCaller()).webhooks.rotateSecret({ id });
    endpointPaths(id);
    return {
      status: "ok",
      message: `New secret issued. Until ${formatTime(previousSecretExpiresAt)} every delivery carries a signature with each secret, so switch your receiver before then.`,
      reveal: { label: "New signing secret", value: secret, note: SECRET_NOTE },
    };
  });
}

/** Sends one test event to the endpoint now and reports what the receiver answered. */
export async function sendTestAction(_previous: FormState, form: FormData): Promise<FormState> {
  const id = field(form, "id");
  return runAction(async () => {
    const result = await (await settingsCaller()).webhooks.sendTest({ id });
    endpointPaths(id);
    const answer = result.responseStatus === null ? "no answer" : `HTTP ${result.responseStatus}`;
    return result.success
      ? { status: "ok", message: `Test event ${result.eventId} delivered: the receiver answered ${answer}.` }
      : { status: "error", message: `Test event ${result.eventId} failed: ${answer}. See the delivery log below.` };
  });
}

/** Delivers a delivery's event again, once. */
export async function redeliverAction(_previous: FormState, form: FormData): Promise<FormState> {
  const endpointId = field(form, "endpointId");
  return runAction(async () => {
    const result = await (await settingsCaller()).webhooks.redeliver({ deliveryId: field(form, "deliveryId") });
    endpointPaths(endpointId);
    const answer = result.responseStatus === null ? "no answer" : `HTTP ${result.responseStatus}`;
    return result.success
      ? { status: "ok", message: `Redelivered: ${answer}.` }
      : { status: "error", message: `Redelivery failed: ${answer}.` };
  });
}

/** Deletes the endpoint and its delivery log, then goes back to the list. */
export async function deleteEndpointAction(_previous: FormState, form: FormData): Promise<FormState> {
  const id = field(form, "id");
  const result = await runAction(async () => {
    await (await settingsCaller()).webhooks.delete({ id });
    revalidatePath("/settings/webhooks");
    return { status: "ok" };
  });
  if (result.status === "ok") redirect("/settings/webhooks?deleted=1");
  return result;
}

/** A `datetime-local` field read as UTC (the form says so), as ISO 8601; undefined when empty. */
function utcTime(form: FormData, name: string): string | undefined {
  const value = field(form, name).trim();
  if (!value) return undefined;
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(value)
    ? `${value}${value.length === 16 ? ":00" : ""}Z`
    : value;
}

// What the replay form asks for: the window, and whether the events the endpoint never got count too.
function replayInput(form: FormData) {
  return {
    id: field(form, "id"),
    since: utcTime(form, "since") ?? "",
    until: utcTime(form, "until"),
    statuses: field(form, "missing") === "on" ? (["failed", "missing"] as const) : (["failed"] as const),
  };
}

/** Counts what a replay would send (a dry run); the result carries the window for the button that starts it. */
export async function countReplayAction(_previous: FormState, form: FormData): Promise<FormState> {
  const input = replayInput(form);
  return runAction(
    async () => {
      const { matched, since, until, testFailed } = await (await settingsCaller()).webhooks.replayCount({
        ...input,
        statuses: [...input.statuses],
      });
      // Failed test deliveries are left out of a replay: saying so explains a count lower than the failures listed.
      const between = `between ${formatTime(since)} and ${formatTime(until)}`;
      const tests = `${testFailed.toLocaleString("en-GB")} test ${testFailed === 1 ? "delivery" : "deliveries"} failed and ${testFailed === 1 ? "is" : "are"} not replayed (send a new test event instead)`;
      return {
        status: "ok",
        message:
          matched === 0
            ? testFailed > 0
              ? `No failed live deliveries ${between}; ${tests}.`
              : `Nothing to replay ${between}.`
            : `${matched.toLocaleString("en-GB")} ${matched === 1 ? "delivery matches" : "deliveries match"} ${between}.${testFailed > 0 ? ` ${tests}.` : ""}`,
        values: {
          since: since.toISOString(),
          until: until.toISOString(),
          statuses: [...input.statuses],
          matched: String(matched),
        },
      };
    },
    { since: field(form, "since"), until: field(form, "until"), missing: field(form, "missing") },
  );
}

/** Starts the replay the count showed; its progress is listed on the endpoint's page. */
export async function startReplayAction(_previous: FormState, form: FormData): Promise<FormState> {
  const id = field(form, "id");
  return runAction(async () => {
    const replay = await (await settingsCaller()).webhooks.replayStart({
      id,
      since: field(form, "since"),
      until: field(form, "until") || undefined,
      statuses: fields(form, "statuses").filter((value) => value === "failed" || value === "missing"),
    });
    endpointPaths(id);
    return {
      status: "ok",
      message:
        replay.matched === 0
          ? "Nothing to replay."
          : `Replay started: ${replay.matched.toLocaleString("en-GB")} deliveries, at most 10 a second. Its progress is below.`,
    };
  });
}

/** Cancels a running replay. */
export async function cancelReplayAction(_previous: FormState, form: FormData): Promise<FormState> {
  const id = field(form, "id");
  return runAction(async () => {
    const replay = await (await settingsCaller()).webhooks.replayCancel({ id, replayId: field(form, "replayId") });
    endpointPaths(id);
    return { status: "ok", message: `Replay ${replay.status}: ${replay.sent} of ${replay.matched} sent.` };
  });
}
