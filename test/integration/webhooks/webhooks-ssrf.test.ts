// The SSRF filter of webhook deliveries (docs/architecture.md, "Webhooks and the outbox"): refused addresses are judged
// before any connection, after DNS resolution for host names, and redirects are never followed. Loopback is refused
// here unless a test turns WEBHOOKS_ALLOW_LOOPBACK on; no packet ever goes to a private address (the filter refuses
// before connecting).
process.env.WEBHOOKS_ALLOW_LOOPBACK = "false";

import ipaddr from "ipaddr.js";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { IDLE } from "../../../app/(settings)/_lib/form-state";
import { WebhookForm } from "../../../app/(settings)/settings/webhooks/webhook-form";
import { prisma } from "../../../server/db/transaction";
import { resetEnvCache } from "../../../server/env";
import { ApiError } from "../../../server/errors";
import { createWebhookEndpoint, sendTestEvent } from "../../../server/webhooks/endpoints";
import { blockedReason, guardedLookup } from "../../../server/webhooks/ssrf";
import { postWebhook } from "../../../server/webhooks/transport";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import { orgWithRoles, refusal } from "../../helpers/members";
import { freePort } from "../../helpers/ports";
import { type Receiver, startReceiver } from "../../helpers/receiver";

let receiver: Receiver;
let api: TestServer;
beforeAll(async () => {
  receiver = await startReceiver();
  api = await startApi();
});
afterAll(async () => {
  await receiver.close();
  await api.close();
});
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
const ALLOWED = [
  "93.184.216.34",
  "8.8.8.8",
  "172.32.0.1",
  "100.128.0.1",
  "2606:4700:4700::1111",
  "2a00:1450::1",
  "2001:4860:4860::8888",
  "::ffff:8.8.8.8",
  "64:ff9b::808:808",
];

/**
 * IANA IPv4 Special-Purpose Address Registry (RFC 6890), https://www.iana.org/assignments/iana-ipv4-special-registry/,
 * every row in the registry's order: address block, name, RFC, "Globally Reachable" (null where the registry leaves it
 * blank or N/A). Multicast 224.0.0.0/4 has a registry of its own and is listed last.
 */
const IANA_IPV4: ReadonlyArray<[string, string, string, boolean | null]> = [
  ["0.0.0.0/8", '"This network"', "RFC 791", false],
  ["0.0.0.0/32", '"This host on this network"', "RFC 1122", false],
  ["10.0.0.0/8", "Private-Use", "RFC 1918", false],
  ["100.64.0.0/10", "Shared Address Space", "RFC 6598", false],
  ["127.0.0.0/8", "Loopback", "RFC 1122", false],
  ["169.254.0.0/16", "Link Local", "RFC 3927", false],
  ["172.16.0.0/12", "Private-Use", "RFC 1918", false],
  ["192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890", false],
  ["192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", false],
  ["192.0.0.8/32", "IPv4 dummy address", "RFC 7600", false],
  ["192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", true],
  ["192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", true],
  ["192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880", false],
  ["192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880", false],
  ["192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", false],
  ["192.31.196.0/24", "AS112-v4", "RFC 7535", true],
  ["192.52.193.0/24", "AMT", "RFC 7450", true],
  ["192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", null],
  ["192.88.99.2/32", "6a44-relay anycast address", "RFC 6751", false],
  ["192.168.0.0/16", "Private-Use", "RFC 1918", false],
  ["192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", true],
  ["198.18.0.0/15", "Benchmarking", "RFC 2544", false],
  ["198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", false],
  ["203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", false],
  ["240.0.0.0/4", "Reserved", "RFC 1112", false],
  ["255.255.255.255/32", "Limited Broadcast", "RFC 8190", false],
  ["224.0.0.0/4", "Multicast (IPv4 Multicast Address Space Registry)", "RFC 5771", false],
];

/**
 * IANA IPv6 Special-Purpose Address Registry (RFC 6890), https://www.iana.org/assignments/iana-ipv6-special-registry/,
 * every row in the registry's order (as updated 2025-10-09), then the blocks of the IPv6 Address Space registry outside
 * global unicast that a host could still be given, and the IPv4-translated prefix of RFC 7915 (SIIT), which no registry
 * lists.
 */
const IANA_IPV6: ReadonlyArray<[string, string, string, boolean | null]> = [
  ["::1/128", "Loopback Address", "RFC 4291", false],
  ["::/128", "Unspecified Address", "RFC 4291", false],
  ["::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", false],
  ["64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC 6052", true],
  ["64:ff9b:1::/48", "IPv4-IPv6 Translat.", "RFC 8215", false],
  ["100::/64", "Discard-Only Address Block", "RFC 6666", false],
  ["100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", false],
  ["2001::/23", "IETF Protocol Assignments", "RFC 2928", false],
  ["2001::/32", "TEREDO", "RFC 4380", null],
  ["2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", true],
  ["2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", true],
  ["2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", true],
  ["2001:2::/48", "Benchmarking", "RFC 5180", false],
  ["2001:3::/32", "AMT", "RFC 7450", true],
  ["2001:4:112::/48", "AS112-v6", "RFC 7535", true],
  ["2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", null],
  ["2001:20::/28", "ORCHIDv2", "RFC 7343", true],
  ["2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", true],
  ["2001:db8::/32", "Documentation", "RFC 3849", false],
  ["2002::/16", "6to4", "RFC 3056", null],
  ["2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", true],
  ["3fff::/20", "Documentation", "RFC 9637", false],
  ["5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", false],
  ["fc00::/7", "Unique-Local", "RFC 4193", false],
  ["fe80::/10", "Link-Local Unicast", "RFC 4291", false],
  ["fec0::/10", "Site-local (deprecated; IPv6 Address Space registry)", "RFC 3879", false],
  ["ff00::/8", "Multicast (IPv6 Address Space registry)", "RFC 4291", false],
  ["::ffff:0:0:0/96", "IPv4-translated (SIIT; in no registry)", "RFC 7915", false],
];

/** The forms that carry an IPv4 address and are judged by it (docs/architecture.md, "Webhooks and the outbox"). */
const CARRIES_IPV4 = new Set(["::ffff:0:0/96", "64:ff9b::/96"]);

it("refuses every block of IANA's special-purpose registries, the globally reachable ones too: none is a webhook receiver", () => {
  const samples = (cidr: string): string[] => {
    const [network, bits] = ipaddr.parseCIDR(cidr);
    const first = network.toString();
    const last = (network.kind() === "ipv4" ? ipaddr.IPv4 : ipaddr.IPv6).broadcastAddressFromCIDR(cidr).toString();
    // A third address inside the block: the first one with its lowest byte set, when the block has room for it.
    const bytes = network.toByteArray();
    if (bits < bytes.length * 8) bytes[bytes.length - 1] = 7;
    return [...new Set([first, last, ipaddr.fromByteArray(bytes).toString()])];
  };
  expect(IANA_IPV4).toHaveLength(27);
  expect(IANA_IPV6).toHaveLength(28);
  for (const [block, name] of [...IANA_IPV4, ...IANA_IPV6]) {
    for (const address of samples(block)) {
      const label = `${address} in ${block} (${name})`;
      if (CARRIES_IPV4.has(block)) {
        const carried = ipaddr.fromByteArray(ipaddr.parse(address).toByteArray().slice(12)).toString();
        expect(blockedReason(address, { allowLoopback: false }), label).toBe(
          blockedReason(carried, { allowLoopback: false }),
        );
        continue;
      }
      expect(blockedReason(address, { allowLoopback: false }), label).not.toBeNull();
      const loopback = block === "127.0.0.0/8" || block === "::1/128";
      if (!loopback) expect(blockedReason(address, { allowLoopback: true }), label).not.toBeNull();
    }
  }
  // SIIT (RFC 7915) and Teredo carry an IPv4 address too, but are refused whatever it is.
  for (const address of [
    "::ffff:0:7f00:1",
    "::ffff:0:a9fe:a9fe",
    "::ffff:0:808:808",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
  ])
    expect(blockedReason(address, { allowLoopback: true }), address).toBe("a private or reserved address");
});

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
        /^must not point at a loopback address: localhost resolves to (127\.0\.0\.1|::1); for local development the server's operator can allow loopback addresses with WEBHOOKS_ALLOW_LOOPBACK=true$/,
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

it("a loopback refusal names WEBHOOKS_ALLOW_LOOPBACK=true, in the API's answer and the settings' message", async () => {
  const setting =
    "for local development the server's operator can allow loopback addresses with WEBHOOKS_ALLOW_LOOPBACK=true";
  const org = await createTestOrg();
  const key = await createKey(org.orgId, ["webhooks:write"]);
  const answer = await client(api.url, key)("POST", "/webhook-endpoints", {
    url: "http://127.0.0.1/hook",
    events: ["*"],
  });
  expect(answer.status).toBe(422);
  expect(answer.body.error.message).toBe(
    `The webhook endpoint is not valid: url must not point at a loopback address (127.0.0.1); ${setting}`,
  );
  expect(answer.body.error.details).toEqual([
    { path: ["url"], message: `must not point at a loopback address (127.0.0.1); ${setting}` },
  ]);

  const { members } = await orgWithRoles();
  const refused = await refusal(members.developer.caller.webhooks.create({ url: "http://[::1]:8080/", events: ["*"] }));
  expect(refused.message).toBe(
    `The webhook endpoint is not valid: url must not point at a loopback address (::1); ${setting}`,
  );
  // Other refusals are no matter of that setting, so they do not name it.
  const privateAddress = await refusal(
    members.developer.caller.webhooks.create({ url: "http://10.0.0.1/", events: ["*"] }),
  );
  expect(privateAddress.message).toBe(
    "The webhook endpoint is not valid: url must not point at a private or reserved address (10.0.0.1)",
  );
});

it("the endpoint form's hint says what this server accepts: loopback refused, or allowed by WEBHOOKS_ALLOW_LOOPBACK", () => {
  const hint = (allowLoopback: boolean) =>
    renderToStaticMarkup(
      createElement(WebhookForm, {
        action: async () => IDLE,
        eventNames: ["account.created"],
        resources: ["account"],
        submitLabel: "Register endpoint",
        idPrefix: "new-endpoint",
        allowLoopback,
      }),
    )
      .match(/<p id="new-endpoint-url-hint"[^>]*>(.*?)<\/p>/)?.[1]
      ?.replace(/<[^>]+>/g, "")
      .replace(/&#x27;/g, "'");
  expect(hint(false)).toBe(
    "An https URL your server answers with a 2xx status. Private and loopback addresses are refused; for local development, the server's operator can allow loopback with WEBHOOKS_ALLOW_LOOPBACK=true.",
  );
  expect(hint(true)).toBe(
    "An https URL your server answers with a 2xx status. Private addresses are refused; loopback addresses (localhost, 127.0.0.1) are allowed on this server (WEBHOOKS_ALLOW_LOOPBACK=true), for local development.",
  );
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
