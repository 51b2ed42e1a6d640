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

function endpointPaths(id?: string): void {
  revalidatePath("/settings/webhooks");
  if (id) revalidatePath(`/settings/webhooks/${id}`);
}

/** Registers an endpoint; the signing secret is returned in the form state with a link to the endpoint's page. */
export async function createEndpointAction(_previous: FormState, form: FormData): Promise<FormState> {
  const url = field(form, "url");
  const description = field(form, "description");
  const events = chosenEvents(form);
  return runAction(
    async () => {
      const { endpoint, secret } = await (await settingsCaller()).webhooks.create({ url, events, description });
      endpointPaths();
      return {
        status: "ok",
        message: `Endpoint ${endpoint.url} registered for ${endpoint.events.join(", ")}.`,
        reveal: { label: "Signing secret", value: secret, note: SECRET_NOTE },
        link: { href: `/settings/webhooks/${endpoint.id}`, label: "Open the endpoint: test it, see its deliveries" },
      };
    },
    { url, description, events },
  );
}

/** Saves URL, events and description of the endpoint named by the form's `id`. */
export async function updateEndpointAction(_previous: FormState, form: FormData): Promise<FormState> {
  const id = field(form, "id");
  const url = field(form, "url");
  const description = field(form, "description");
  const events = chosenEvents(form);
  return runAction(
    async () => {
      await (await settingsCaller()).webhooks.update({ id, url, events, description });
      endpointPaths(id);
      return { status: "ok", message: "Endpoint saved." };
    },
    { url, description, events },
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
