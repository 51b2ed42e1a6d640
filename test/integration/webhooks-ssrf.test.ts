// The SSRF filter of webhook deliveries (docs/architecture.md, "Webhooks and the outbox"): refused addresses are judged
// before any connection, after DNS resolution for host names, and redirects are never followed. Loopback is refused
// here unless a test turns WEBHOOKS_ALLOW_LOOPBACK on; no packet ever goes to a private address (the filter refuses
// before connecting).
process.env.WEBHOOKS_ALLOW_LOOPBACK = "false";

import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { prisma } from "../../server/db/transaction";
import { resetEnvCache } from "../../server/env";
import { ApiError } from "../../server/errors";
import { createWebhookEndpoint, sendTestEvent } from "../../server/webhooks/endpoints";
import { blockedReason, guardedLookup } from "../../server/webhooks/ssrf";
import { postWebhook } from "../../server/webhooks/transport";
import { createTestOrg } from "../helpers/api";
import { freePort } from "../helpers/ports";
import { type Receiver, startReceiver } from "../helpers/receiver";

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());
afterEach(() => {
  process.env.WEBHOOKS_ALLOW_LOOPBACK = "false";
  resetEnvCache();
});

function allowLoopback(): void {
  process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";
  resetEnvCache();
}

const REFUSED_ALWAYS = [
  "10.0.0.1",
  "10.255.255.255",
  "172.16.0.1",
  "172.31.255.254",
  "192.168.1.1",
  "169.254.169.254",
  "169.254.0.1",
  "100.64.0.1",
  "100.127.255.254",
  "0.0.0.0",
  "0.1.2.3",
  "224.0.0.1",
  "239.255.255.250",
  "255.255.255.255",
  "240.0.0.1",
  "::",
  "fc00::1",
  "fd12:3456::1",
  "fe80::1",
  "fe80::1%eth0",
  "ff02::1",
  "::ffff:10.0.0.1",
  "::ffff:169.254.169.254",
  "::ffff:a9fe:a9fe",
  "::ffff:192.168.0.1",
  "0:0:0:0:0:ffff:c0a8:0001",
  "::10.0.0.1",
  "64:ff9b::a9fe:a9fe",
  "64:ff9b::10.1.1.1",
  "2002:a9fe:a9fe::1",
];
const LOOPBACK = ["127.0.0.1", "127.1.2.3", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "::ffff:7f00:1"];
const ALLOWED = ["93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "2a00:1450::1"];

it("refuses private, link-local, CGNAT, multicast, reserved and embedded-IPv4 forms; loopback only when allowed", () => {
  for (const address of REFUSED_ALWAYS) {
    expect(blockedReason(address, { allowLoopback: false }), address).not.toBeNull();
    expect(blockedReason(address, { allowLoopback: true }), address).not.toBeNull();
  }
  for (const address of LOOPBACK) {
    expect(blockedReason(address, { allowLoopback: false }), address).toBe("a loopback address");
    expect(blockedReason(address, { allowLoopback: true }), address).toBeNull();
  }
  for (const address of ALLOWED) expect(blockedReason(address, { allowLoopback: false }), address).toBeNull();
  expect(blockedReason("example.com", { allowLoopback: true })).toBe("not an IP address");
});

it("refuses literal private and metadata addresses before connecting, recorded as a failed attempt", async () => {
  const org = await createTestOrg();
  const { endpoint } = await createWebhookEndpoint(org.orgId, { url: "https://example.com/hook", events: ["*"] });
  const urls = [
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.5:8080/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://[::ffff:a9fe:a9fe]/hook",
    "http://[fd00::1]/hook",
    "http://2130706433/hook",
    "http://0x7f.0.0.1/hook",
  ];
  for (const url of urls) {
    // Stored as if it had been allowed once; every attempt judges the address again.
    await prisma().webhookEndpoint.update({ where: { id: endpoint.id }, data: { url } });
    const sent = await sendTestEvent(org.orgId, endpoint.id);
    expect(sent, url).toMatchObject({ success: false, responseStatus: null });
    const attempt = await prisma().deliveryAttempt.findFirstOrThrow({ where: { deliveryId: sent.deliveryId } });
    expect(attempt.error, url).toMatch(/^refused: .+ is a (private or reserved|loopback) address$/);
    expect(attempt.durationMs).toBeLessThan(1_000);
  }
});

it("refuses a host name that resolves to loopback unless allowed; other private ranges stay refused even then", async () => {
  const port = new URL(receiver.url).port;
  const viaName = `http://localhost:${port}/hook`;
  const refused = await postWebhook(viaName, "{}", {}, { allowLoopback: false });
  expect(refused).toMatchObject({ success: false, status: null, result: "refused" });
  expect(refused.error).toMatch(/^refused: localhost \((127\.0\.0\.1|::1)\) is a loopback address$/);
  expect(receiver.requests).toHaveLength(0);

  const lookup = guardedLookup({ allowLoopback: false });
  const error = await new Promise<Error | null>((resolve) => lookup("localhost", {}, (err) => resolve(err)));
  expect(error?.message).toMatch(/loopback/);

  // Creating an endpoint on loopback is refused too unless the setting is on.
  const org = await createTestOrg();
  const creation = await createWebhookEndpoint(org.orgId, { url: viaName, events: ["*"] }).catch((e: unknown) => e);
  expect(creation).toBeInstanceOf(ApiError);
  expect((creation as ApiError).details).toEqual([
    {
      path: ["url"],
      message: expect.stringMatching(
        /^must not point at a loopback address: localhost resolves to (127\.0\.0\.1|::1)$/,
      ),
    },
  ]);

  allowLoopback();
  const allowed = await postWebhook(`http://127.0.0.1:${port}/hook`, "{}", {}, { allowLoopback: true });
  expect(allowed).toMatchObject({ success: true, status: 200, result: "success" });
  expect(receiver.requests).toHaveLength(1);
  const { endpoint } = await createWebhookEndpoint(org.orgId, { url: receiver.url, events: ["*"] });
  await prisma().webhookEndpoint.update({ where: { id: endpoint.id }, data: { url: "http://192.168.0.10/hook" } });
  const privateStill = await sendTestEvent(org.orgId, endpoint.id);
  expect(privateStill).toMatchObject({ success: false, responseStatus: null });
  const creationPrivate = await createWebhookEndpoint(org.orgId, { url: "http://172.20.0.1/", events: ["*"] }).catch(
    (e: unknown) => e,
  );
  expect((creationPrivate as ApiError).code).toBe("validation_error");
});

it("never follows a redirect, even one to the metadata address", async () => {
  allowLoopback();
  const redirecting = await startReceiver();
  const target = await startReceiver();
  try {
    redirecting.reply((_, index) => ({
      status: index === 0 ? 307 : 301,
      headers: { Location: index === 0 ? target.url : "http://169.254.169.254/latest/meta-data/" },
    }));
    for (const expected of [307, 301]) {
      const outcome = await postWebhook(redirecting.url, "{}", {}, { allowLoopback: true });
      expect(outcome).toMatchObject({
        success: false,
        status: expected,
        result: "http_error",
        error: `HTTP ${expected}: redirects are not followed`,
      });
    }
    expect(redirecting.requests).toHaveLength(2);
    expect(target.requests).toHaveLength(0);
  } finally {
    await Promise.all([redirecting.close(), target.close()]);
  }
});

it("refuses non-http schemes and cuts a response body to 2,048 characters", async () => {
  expect(await postWebhook("file:///etc/passwd", "{}", {}, { allowLoopback: true })).toMatchObject({
    success: false,
    result: "refused",
    error: "not an http(s) URL",
  });
  const chatty = await startReceiver();
  chatty.reply(() => ({ status: 200, body: "é".repeat(100_000) }));
  try {
    const outcome = await postWebhook(chatty.url, "{}", {}, { allowLoopback: true });
    expect(outcome.success).toBe(true);
    expect(outcome.body).toBe("é".repeat(2_048));
  } finally {
    await chatty.close();
  }
});

it("reports a receiver that refuses the connection as a network error, with no status", async () => {
  const closed = await freePort();
  const outcome = await postWebhook(`http://127.0.0.1:${closed}/hook`, "{}", {}, { allowLoopback: true });
  expect(outcome).toMatchObject({ success: false, status: null, result: "network_error", error: "connection refused" });
});
