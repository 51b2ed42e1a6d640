// The receiver guide (/docs/webhooks): it renders the documented facts, and its Node verification code accepts real
// deliveries and refuses tampered or stale ones.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, beforeAll, expect, it } from "vitest";
import WebhooksGuidePage from "../../../app/docs/webhooks/page";
import { EVENT_NAMES } from "../../../server/platform/events-feed/schema";
import { createWebhookEndpoint, rotateWebhookSecret, sendTestEvent } from "../../../server/webhooks/endpoints";
import { VERIFY_SNIPPET } from "../../../server/webhooks/receiver-docs";
import { createTestOrg } from "../../helpers/api";
import { type Receiver, startReceiver } from "../../helpers/receiver";

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

it("shows payload, headers, retry schedule, disable rule and verification code, without external resources", () => {
  const html = renderToStaticMarkup(createElement(WebhooksGuidePage));
  for (const text of [
    "Service-Signature",
    "Service-Event-Id",
    "Service-Webhooks/1.1",
    "X-MSP-Signature",
    "timingSafeEqual",
    "300",
    "at once",
    "1 min after attempt 1",
    "5 min after attempt 2",
    "30 min after attempt 3",
    "2 h after attempt 4",
    "10 s",
    "410 Gone",
    "5 consecutive failed deliveries",
    "webhook.test",
    ...EVENT_NAMES,
  ])
    expect(html, text).toContain(text);
  expect(html).not.toMatch(/<script|<link|@import|fonts\./);
});

it("the documented Node code verifies real deliveries, both secrets after a rotation, and refuses tampering", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "verify-"));
  const file = path.join(dir, "verify.mjs");
  writeFileSync(file, VERIFY_SNIPPET);
  const { verifyWebhook } = (await import(pathToFileURL(file).href)) as {
    verifyWebhook: (body: string, header: string | undefined, secret: string, tolerance?: number) => boolean;
  };

  const { orgId } = await createTestOrg();
  const { endpoint, secret } = await createWebhookEndpoint(orgId, { url: receiver.url, events: ["*"] });
  await sendTestEvent(orgId, endpoint.id);
  const first = receiver.requests.at(-1);
  const header = first?.headers["service-signature"] as string;
  const body = first?.body ?? "";
  expect(verifyWebhook(body, header, secret)).toBe(true);
  expect(verifyWebhook(body.replace("Test", "Fake"), header, secret)).toBe(false);
  expect(verifyWebhook(body, header, `${secret}x`)).toBe(false);
  expect(verifyWebhook(body, undefined, secret)).toBe(false);
  expect(verifyWebhook(body, header.replace(/v1=[0-9a-f]{64}/, "v1=abc"), secret)).toBe(false);
  // Older than 5 minutes: refused even with a valid signature.
  const t = Number(/t=(\d+)/.exec(header)?.[1]);
  const stale = header.replace(`t=${t}`, `t=${t - 301}`);
  expect(verifyWebhook(body, stale, secret)).toBe(false);

  const rotated = await rotateWebhookSecret(orgId, endpoint.id);
  await sendTestEvent(orgId, endpoint.id);
  const second = receiver.requests.at(-1);
  expect(verifyWebhook(second?.body ?? "", second?.headers["service-signature"] as string, secret)).toBe(true);
  expect(verifyWebhook(second?.body ?? "", second?.headers["service-signature"] as string, rotated.secret)).toBe(true);
});
