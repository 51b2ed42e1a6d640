"use server";

import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { ApiError } from "../../../../../server/errors";
import { authFor } from "../../../../../server/identity/better-auth";
import { viaAuth } from "../../../../../server/identity/better-auth-errors";
import { SAML_METADATA_MAX_BYTES } from "../../../../../server/identity/sso/settings";
import type { FormState } from "../../../_lib/form-state";
import { field, fields, runAction } from "../../../_lib/run-action";
import { settingsCaller, settingsRequest } from "../../../_lib/session";

const PAGE = "/settings/security/sso";
const ROLES = ["admin", "developer", "viewer"] as const;

// The textarea's lines in order, as the first matching rule wins (§11.3); the last `=` splits, since a group name
// (an Entra claim URI, say) may itself hold one. A line that is not a rule is named, so the page can say which.
function parseGroupRoles(text: string): { group: string; role: (typeof ROLES)[number] }[] {
  const rules: { group: string; role: (typeof ROLES)[number] }[] = [];
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf("=");
    const group = at < 0 ? "" : line.slice(0, at).trim();
    const role =
      at < 0
        ? ""
        : line
            .slice(at + 1)
            .trim()
            .toLowerCase();
    if (!group || !(ROLES as readonly string[]).includes(role)) {
      const message = `line ${index + 1} (“${line.slice(0, 80)}”) is not “group = admin|developer|viewer”`;
      throw new ApiError("validation_error", `Group → role map: ${message}`, {
        details: [{ path: ["groupRoles"], message }],
      });
    }
    rules.push({ group, role: role as (typeof ROLES)[number] });
  }
  return rules;
}

/**
 * Connects (or replaces) the OIDC provider from the form's issuer, client id, client secret and extra scopes
 * (space- or comma-separated) (docs/api-contract.md §11.1). Needs a recent sign-in; a refused discovery or an issuer
 * outside the trusted ones comes back as the plugin's reason.
 */
export async function connectOidcAction(_previous: FormState, form: FormData): Promise<FormState> {
  const issuer = field(form, "issuer").trim();
  const clientId = field(form, "clientId");
  const extraScopes = field(form, "extraScopes");
  return runAction(
    async () => {
      await (await settingsCaller()).sso.connectOidc({
        issuer,
        clientId,
        clientSecret: field(form, "clientSecret"),
        extraScopes: extraScopes.split(/[\s,]+/).filter(Boolean),
      });
      revalidatePath(PAGE);
      return { status: "ok", message: `Connected the OIDC provider ${issuer}.` };
    },
    { issuer, clientId, extraScopes },
  );
}

/**
 * Connects (or replaces) the SAML provider from its metadata XML: the textarea, or else the uploaded file read as text
 * (so the form works without scripts too), at most 100 KiB (docs/api-contract.md §11.1). Needs a recent sign-in.
 */
export async function connectSamlAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    let metadataXml = field(form, "metadataXml").trim();
    const file = form.get("metadataFile");
    if (!metadataXml && file instanceof File && file.size > 0) {
      if (file.size > SAML_METADATA_MAX_BYTES) {
        return { status: "error", message: "The metadata file is larger than 100 KiB", field: "metadataXml" };
      }
      metadataXml = (await file.text()).trim();
    }
    if (!metadataXml) {
      return { status: "error", message: "Paste the metadata XML or choose its file", field: "metadataXml" };
    }
    await (await settingsCaller()).sso.connectSaml({ metadataXml });
    revalidatePath(PAGE);
    return { status: "ok", message: "Connected the SAML identity provider." };
  });
}

/** Disconnects the identity provider (refused while the policy is required). Needs a recent sign-in. */
export async function disconnectAction(_previous: FormState, _form: FormData): Promise<FormState> {
  return runAction(async () => {
    await (await settingsCaller()).sso.disconnect();
    revalidatePath(PAGE);
    return { status: "ok", message: "The identity provider is disconnected: nobody signs in through it now." };
  });
}

/**
 * Adds an email domain to verify (docs/api-contract.md §11.2); the page then shows its TXT record. Needs a recent
 * sign-in.
 */
export async function addDomainAction(_previous: FormState, form: FormData): Promise<FormState> {
  const domain = field(form, "domain");
  return runAction(
    async () => {
      const added = await (await settingsCaller()).sso.addDomain({ domain });
      revalidatePath(PAGE);
      return {
        status: "ok",
        message: `Added ${added.domain}: publish its TXT record at your DNS host, then press Verify.`,
      };
    },
    { domain },
  );
}

/** Looks the domain's TXT record up now: verified, or what the lookup found instead. */
export async function verifyDomainAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    const domain = await (await settingsCaller()).sso.verifyDomain({ domain: field(form, "domain") });
    revalidatePath(PAGE);
    return domain.verified
      ? { status: "ok", message: `${domain.domain} is verified.` }
      : { status: "error", message: `${domain.domain} is not verified: ${domain.lastError ?? "no record found"}` };
  });
}

/** Removes a domain: its people are no longer sent to the identity provider. Needs a recent sign-in. */
export async function removeDomainAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    const { domain } = await (await settingsCaller()).sso.removeDomain({ domain: field(form, "domain") });
    revalidatePath(PAGE);
    return { status: "ok", message: `Removed ${domain}.` };
  });
}

/**
 * Saves the policy form (docs/api-contract.md §11.3): mode, just-in-time membership, default role, groups claim, the
 * ordered `group = role` lines and, while required, the grace period's end (a UTC date and time). Saving also ends an
 * operator's switch-off. Needs a recent sign-in.
 */
export async function savePolicyAction(_previous: FormState, form: FormData): Promise<FormState> {
  const values = {
    mode: field(form, "mode"),
    jit: field(form, "jit"),
    defaultRole: field(form, "defaultRole"),
    groupsClaim: field(form, "groupsClaim"),
    groupRoles: field(form, "groupRoles"),
    graceUntil: field(form, "graceUntil"),
  };
  return runAction(async () => {
    const grace = values.mode === "required" && values.graceUntil ? new Date(`${values.graceUntil}Z`) : null;
    if (grace && Number.isNaN(grace.getTime())) {
      return { status: "error", message: "The grace period's end is not a date and time", field: "graceUntil", values };
    }
    const policy = await (await settingsCaller()).sso.savePolicy({
      mode: values.mode as "off" | "optional" | "required",
      jit: values.jit === "on",
      defaultRole: values.defaultRole as (typeof ROLES)[number],
      groupsClaim: values.groupsClaim,
      groupRoles: parseGroupRoles(values.groupRoles),
      graceUntil: grace,
    });
    revalidatePath(PAGE);
    revalidatePath("/settings/team");
    return { status: "ok", message: `Policy saved: single sign-on is ${policy.mode}.` };
  }, values);
}

/**
 * Names the ticked owners break-glass owners and the others no longer (owners only; each named owner needs a second
 * factor). Only the owners whose state changes are sent. Needs a recent sign-in.
 */
export async function setBreakGlassAction(_previous: FormState, form: FormData): Promise<FormState> {
  return runAction(async () => {
    const caller = await settingsCaller();
    const wanted = new Set(fields(form, "breakGlass"));
    const current = new Set(fields(form, "current"));
    let changed = 0;
    for (const memberId of fields(form, "owner")) {
      const breakGlass = wanted.has(memberId);
      if (breakGlass === current.has(memberId)) continue;
      await caller.sso.setBreakGlass({ memberId, breakGlass });
      changed += 1;
    }
    revalidatePath(PAGE);
    return { status: "ok", message: changed === 0 ? "Nothing changed." : "Break-glass owners saved." };
  });
}

/**
 * "Test the connection" (docs/api-contract.md §11.4): opens a test, then starts the sign-in through the provider here,
 * so better-auth's state cookie is set on this action's response (`nextCookies`), and sends the browser to the
 * identity provider. It comes back to this page with `?test=<nonce>`, where the claims are shown; nothing is changed
 * and no one is signed in.
 */
export async function testConnectionAction(_previous: FormState, _form: FormData): Promise<FormState> {
  let url: string | undefined;
  const state = await runAction(async () => {
    const { providerId, callbackURL } = await (await settingsCaller()).sso.startTest();
    const request = await settingsRequest();
    const started = await viaAuth(() =>
      authFor(request.origin).api.signInSSO({
        headers: request.headers,
        body: { providerId, callbackURL, errorCallbackURL: callbackURL },
      }),
    );
    url = (started as { url?: string }).url;
    return url ? { status: "ok" } : { status: "error", message: "The identity provider's sign-in did not start" };
  });
  if (state.status === "ok" && url) redirect(url);
  return state;
}
