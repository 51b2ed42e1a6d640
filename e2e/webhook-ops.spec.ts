// An endpoint's operator views: delivery statistics over a range (figures, the chart and its periods), "Replay failed since…" counted first (dry run), then
// started and cancelled with its progress shown, the deliveries filtered by state, and one delivery's attempts in full;
// at 390 px too. The server runs without a webhook worker, so the failed deliveries are written into the test database
// as the worker would have left them (3 deliveries, each failed all 5 attempts with HTTP 503).
import { expect, test } from "@playwright/test";
import pg from "pg";
import { admin, callApi, createUser, type Receiver, screenshot, signIn, startReceiver, type TestUser } from "./helpers";

let user: TestUser;
let receiver: Receiver;
let endpointId: string;

/**
 * Marks the organisation's events fanned out, each with a delivery to the endpoint that failed all 5 attempts, each
 * sent to `url`.
 */
async function failEverything(orgId: string, endpoint: string, url: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(
      `UPDATE "Event" SET "fannedOutAt" = now() AT TIME ZONE 'UTC' WHERE "orgId" = $1 AND "fannedOutAt" IS NULL`,
      [orgId],
    );
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO "WebhookDelivery" ("id", "orgId", "endpointId", "eventId", "status", "attemptCount", "completedAt", "updatedAt")
       SELECT 'whd_' || substr(md5(e."id"), 1, 24), e."orgId", $2, e."id", 'FAILED', 5, now() AT TIME ZONE 'UTC',
              now() AT TIME ZONE 'UTC'
       FROM "Event" AS e WHERE e."orgId" = $1 AND e."name" = 'account.created'
       RETURNING "id"`,
      [orgId, endpoint],
    );
    for (const row of rows) {
      await client.query(
        `INSERT INTO "DeliveryAttempt" ("deliveryId", "attempt", "startedAt", "durationMs", "responseStatus", "responseBody", "error", "success", "url")
         SELECT $1, n, now() AT TIME ZONE 'UTC' - (6 - n) * interval '1 minute', 100 + n * 20, 503, 'upstream down', 'HTTP 503', false, $2
         FROM generate_series(1, 5) AS n`,
        [row.id, url],
      );
    }
  } finally {
    await client.end();
  }
}

test.beforeAll(async () => {
  user = await createUser("replay");
  receiver = await startReceiver();
  const { key } = await admin<{ key: string }>(
    "create-key",
    "--org",
    user.slug,
    "--scopes",
    "accounts:write,webhooks:write",
    "--name",
    "Replay setup",
  );
  const created = await callApi(key, "POST", "/webhook-endpoints", { url: receiver.url, events: ["account.*"] });
  endpointId = (created.body.data as { id: string }).id;
  for (const name of ["Northwind", "Harbor", "Contoso"]) await callApi(key, "POST", "/accounts", { name });
  await failEverything(user.orgId, endpointId, receiver.url);
});

test.afterAll(async () => {
  await receiver.close();
});

test("stats, the replay's dry-run count, start, progress and cancel, the failed deliveries and one in full", async ({
  page,
}) => {
  await signIn(page, user);
  await page.goto(`/settings/webhooks/${endpointId}`);

  // Statistics of the last 24 hours: 3 deliveries, all failed; the period table has their row.
  await expect(page.getByTestId("stats-totals")).toContainText("3: 0 succeeded, 3 failed");
  await expect(page.getByTestId("stats-error-rate")).toHaveText("100 % of finished deliveries failed");
  // The chart: one bar per half hour of the day, the deliveries' bar stacked 3 high, named for screen readers.
  const chart = page.getByTestId("stats-chart");
  await expect(
    chart.getByRole("img", {
      name: /^Deliveries per 30 min as succeeded, failed and filtered out, with the error rate/,
    }),
  ).toBeVisible();
  await expect(chart.locator("[data-bar]")).toHaveCount(48);
  await expect(chart.locator("[data-total='3']")).toHaveCount(1);
  const periods = page.getByTestId("stats-buckets").locator("tbody tr");
  await expect(periods).toHaveCount(1);
  await expect(periods.first().locator("td").nth(1)).toHaveText("3");
  await page.getByLabel("Range", { exact: true }).selectOption("7d");
  await page.getByRole("button", { name: "Show statistics" }).click();
  await expect(page).toHaveURL(/range=7d/);
  await expect(page.getByTestId("stats-buckets")).toContainText("Deliveries per 3 h");

  // Replay failed since…: the count comes first, then the replay of exactly that many.
  await page.getByRole("button", { name: "Count deliveries to replay" }).click();
  await expect(page.getByText(/^3 deliveries match between/)).toBeVisible();
  await screenshot(page, "webhook-replay-count");
  await page.getByRole("button", { name: "Replay 3 deliveries" }).click();
  await expect(page.getByText(/^Replay started: 3 deliveries, at most 10 a second/)).toBeVisible();
  const replays = page.getByTestId("replays").locator("tbody tr");
  await expect(replays).toHaveCount(1);
  await expect(replays.first()).toContainText("running");
  await expect(replays.first().getByTestId("replay-progress")).toHaveText("0 of 3 sent, 0 succeeded");
  // No worker runs here: the replay waits for one, and says so.
  await expect(page.getByText(/A replay is waiting for the webhook worker/)).toBeVisible();
  await replays.first().getByRole("button", { name: "Cancel replay" }).click();
  await expect(page.getByText("Replay cancelled: 0 of 3 sent.")).toBeVisible();
  await page.reload();
  await expect(page.getByTestId("replays").locator("tbody tr").first()).toContainText("cancelled");

  // The deliveries, filtered by state, and one of them with its attempts in full.
  await page.getByLabel("Status", { exact: true }).selectOption("failed");
  await page.getByRole("button", { name: "Filter deliveries" }).click();
  const rows = page.getByTestId("deliveries").locator("tbody tr");
  await expect(rows).toHaveCount(3);
  await page.getByLabel("Status", { exact: true }).selectOption("succeeded");
  await page.getByRole("button", { name: "Filter deliveries" }).click();
  await expect(page.getByTestId("deliveries-empty")).toHaveText("No deliveries match.");
  await page.getByLabel("Status", { exact: true }).selectOption("failed");
  await page.getByRole("button", { name: "Filter deliveries" }).click();
  await rows.first().getByRole("link").click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Delivery whd_");
  await expect(page.getByTestId("delivery-summary")).toContainText("after 5 attempts");
  await expect(page.getByTestId("next-retry")).toHaveText("none");
  await expect(page.getByTestId("request-body")).toContainText('"event":"account.created"');
  await expect(page.getByTestId("attempts").locator(":scope > li")).toHaveCount(5);
  await expect(page.getByTestId("attempts").locator(":scope > li").first()).toContainText("upstream down");
  // Each attempt names the URL it was sent to.
  await expect(page.getByTestId("attempt-url").first()).toHaveText(`POST ${receiver.url}`);
  await expect(page.locator("body")).not.toContainText("whsec_");
  await screenshot(page, "webhook-delivery");

  // At 390 px nothing scrolls sideways.
  await page.setViewportSize({ width: 390, height: 844 });
  for (const path of [page.url(), `/settings/webhooks/${endpointId}`]) {
    await page.goto(path);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, path).toBeLessThanOrEqual(0);
  }
  await screenshot(page, "webhook-endpoint-390");
});
