// Webhook endpoints page: register an endpoint, see its secret, send a test event to a local receiver
// (node:http on 127.0.0.1; the server runs with WEBHOOKS_ALLOW_LOOPBACK=true), see the attempt in the delivery log,
// redeliver, rotate the secret, disable and enable, edit, delete.
import { createHmac } from "node:crypto";
import { expect, type Page, test } from "@playwright/test";
import { createUser, type Receiver, screenshot, signIn, startReceiver, type TestUser } from "./helpers";

let user: TestUser;
let receiver: Receiver;

test.beforeAll(async () => {
  user = await createUser("hooks");
  receiver = await startReceiver();
});

test.afterAll(async () => {
  await receiver.close();
});

function formError(page: Page) {
  return page.locator(".alert.error[role=alert]");
}

/** Checks a delivery's Service-Signature (docs/api-contract.md §6.4) with a secret: HMAC-SHA256 of `<t>.<raw body>`. */
function signedWith(secret: string, header: string | string[] | undefined, body: string): boolean {
  const parts = String(header ?? "").split(",");
  const t = parts.find((part) => part.startsWith("t="))?.slice(2);
  const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
  return parts.some((part) => part === `v1=${expected}`);
}

test("register an endpoint, send a test event to a local receiver and see it in the delivery log", async ({ page }) => {
  await signIn(page, user);
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Webhooks" }).click();
  await expect(page.getByRole("heading", { name: "Your endpoints (0)" })).toBeVisible();

  // A URL that is not http(s) is refused with the service's message, and what was typed is kept.
  await page.getByLabel("Endpoint URL").fill("ftp://example.com/hook");
  await page.getByRole("button", { name: "Register endpoint" }).click();
  await expect(formError(page)).toBeVisible();
  await expect(page.getByLabel("Endpoint URL")).toHaveValue("ftp://example.com/hook");

  await page.getByLabel("Endpoint URL").fill(receiver.url);
  await page.getByLabel(/Description/).fill("Local receiver");
  await page.getByRole("checkbox", { name: /All events/ }).uncheck();
  await page.getByRole("checkbox", { name: "account.created" }).check();
  await page.getByRole("checkbox", { name: "deal.closed_won" }).check();
  await page.getByRole("button", { name: "Register endpoint" }).click();
  const secret = page.getByTestId("revealed-secret");
  await expect(secret).toHaveText(/^whsec_/);
  const signingSecret = (await secret.textContent()) as string;
  await expect(page.getByRole("heading", { name: "Your endpoints (1)" })).toBeVisible();
  const row = page.getByTestId("endpoints").locator("tbody tr");
  await expect(row).toContainText(receiver.url);
  await expect(row).toContainText("account.created");
  await expect(row).toContainText("deal.closed_won");
  await expect(row).toContainText("enabled");
  await screenshot(page, "webhooks-created");

  await page.getByRole("link", { name: "Open the endpoint: test it, see its deliveries" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(receiver.url);
  await expect(page.getByTestId("deliveries-empty")).toBeVisible();

  // Reveal shows the same secret.
  await page.getByRole("button", { name: "Reveal secret" }).click();
  await expect(page.getByTestId("revealed-secret")).toHaveText(signingSecret);

  // Test event: one attempt now; the receiver gets a signed POST and the log shows the attempt.
  await page.getByRole("button", { name: "Send test event" }).click();
  await expect(page.getByText(/Test event evt_\d+_[\w-]+ delivered: the receiver answered HTTP 200/)).toBeVisible();
  expect(receiver.requests).toHaveLength(1);
  const delivered = receiver.requests[0];
  expect(delivered?.method).toBe("POST");
  expect(delivered?.url).toBe("/hooks/crm");
  expect(delivered?.headers["service-event"]).toBe("webhook.test");
  expect(delivered?.headers["user-agent"]).toBe("Service-Webhooks/1.1");
  const payload = JSON.parse(delivered?.body ?? "{}");
  expect(payload).toMatchObject({ event: "webhook.test", orgId: user.orgId, id: expect.stringMatching(/^evt_/) });
  expect(delivered?.headers["service-event-id"]).toBe(payload.id);
  expect(signedWith(signingSecret, delivered?.headers["service-signature"], delivered?.body ?? "")).toBe(true);

  // One row per delivery: its event, its state, how many attempts, and the last one.
  const log = page.getByTestId("deliveries").locator("tbody tr");
  await expect(log).toHaveCount(1);
  await expect(log.first()).toContainText("webhook.test");
  await expect(log.first()).toContainText(payload.id);
  await expect(log.first().locator("td").nth(2)).toHaveText("succeeded");
  await expect(log.first().locator("td").nth(3)).toHaveText("1");
  await expect(log.first().locator("td").nth(4).locator(".badge").first()).toHaveText("200");
  await expect(log.first()).toContainText(/\d+ ms/);
  await screenshot(page, "webhook-endpoint");

  // Redeliver: the same event again, attempt 2 of the same delivery.
  await log.first().getByRole("button", { name: "Redeliver" }).click();
  await expect(page.getByText("Redelivered: HTTP 200.")).toBeVisible();
  expect(receiver.requests).toHaveLength(2);
  expect(JSON.parse(receiver.requests[1]?.body ?? "{}").id).toBe(payload.id);
  await expect(log).toHaveCount(1);
  await expect(log.first().locator("td").nth(3)).toHaveText("2");
  await expect(log.first().locator("td").nth(4)).toContainText("redelivery");

  // Rotate the secret: the next delivery is signed with the new one (and, for 24 h, the old one).
  await page.getByText("Rotate secret…").click();
  await page.getByRole("button", { name: "Rotate secret", exact: true }).click();
  const rotated = page.locator("details").getByTestId("revealed-secret");
  await expect(rotated).toHaveText(/^whsec_/);
  const newSecret = (await rotated.textContent()) as string;
  expect(newSecret).not.toBe(signingSecret);
  await page.getByRole("button", { name: "Send test event" }).click();
  await expect.poll(() => receiver.requests.length).toBe(3);
  const third = receiver.requests[2];
  expect(signedWith(newSecret, third?.headers["service-signature"], third?.body ?? "")).toBe(true);
  expect(signedWith(signingSecret, third?.headers["service-signature"], third?.body ?? "")).toBe(true);

  // Disable: the status shows the reason; enable again.
  await page.getByRole("button", { name: "Disable endpoint" }).click();
  await expect(page.getByTestId("endpoint-status")).toContainText("disabled by a user");
  await page.getByRole("button", { name: "Enable endpoint" }).click();
  await expect(page.getByTestId("endpoint-status")).toContainText("enabled");

  // Edit: subscribe to every event.
  await page.getByRole("checkbox", { name: /All events/ }).check();
  await page.getByLabel(/Description/).fill("Everything");
  await page.getByRole("button", { name: "Save changes" }).click();
  await expect(page.getByText("Endpoint saved.")).toBeVisible();
  await page.goto("/settings/webhooks");
  await expect(page.getByTestId("endpoints").locator("tbody tr")).toContainText("all events");
  await expect(page.getByTestId("endpoints").locator("tbody tr")).toContainText("Everything");
});

test("a disabled endpoint shows why, and delete removes it", async ({ page }) => {
  await signIn(page, user);
  await page.goto("/settings/webhooks");
  await page.getByLabel("Endpoint URL").fill(`${receiver.url}/second`);
  await page.getByRole("button", { name: "Register endpoint" }).click();
  await page.getByRole("link", { name: "Open the endpoint: test it, see its deliveries" }).click();
  await page.getByRole("button", { name: "Disable endpoint" }).click();
  await expect(page.getByTestId("endpoint-status")).toContainText("disabled by a user");
  await page.goto("/settings/webhooks");
  const row = page.getByTestId("endpoints").locator("tbody tr").filter({ hasText: "/second" });
  await expect(row).toContainText("disabled");
  await expect(row).toContainText("disabled by a user");
  await page.goto("/settings");
  await expect(page.getByText("One webhook endpoint is disabled")).toBeVisible();

  await page.goto("/settings/webhooks");
  await row.getByRole("link").click();
  await page.getByText("Delete this endpoint…").click();
  await page.getByRole("button", { name: "Delete endpoint" }).click();
  await expect(page).toHaveURL(/\/settings\/webhooks\?deleted=1$/);
  await expect(page.getByText("Endpoint deleted.")).toBeVisible();
  await expect(page.getByRole("region", { name: /Your endpoints/ })).not.toContainText("/second");
});
