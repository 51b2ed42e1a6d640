// The usage page (docs/architecture.md, "Usage: the roll-up, the chart and the export"): the chart's bars stand for
// the calls of the last 24 hours, a click on a bar narrows the range to it, the request log pages and opens a request,
// the CSV downloads the filtered rows; screenshots at 1280 and 390 px wide.
import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import pg from "pg";
import { admin, callApi, createUser, screenshot, signIn, type TestUser } from "./helpers";

let user: TestUser;
let key: string;
const SLOT = 30 * 60 * 1000;
// Calls at these 30-minute slots back from the current one (the current slot's calls come from the API itself).
const SLOTS_BACK = [2, 3, 5, 8, 13, 21, 34];
const IN_BUSY_SLOT = 60;

test.beforeAll(async () => {
  user = await createUser("usage");
  key = (await admin<{ key: string }>("create-key", "--org", user.slug, "--scopes", "admin:read", "--name", "PSA sync"))
    .key;
  // Earlier calls, as the audit log holds them after a day of use: one slot with more than a page of calls.
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  try {
    const now = Math.floor(Date.now() / SLOT) * SLOT;
    const rows: Array<[string, number, string | null, number, string]> = [];
    for (const back of SLOTS_BACK) {
      const count = back === 3 ? IN_BUSY_SLOT : 4;
      for (let i = 0; i < count; i++) {
        const status = i % 4 === 3 ? 404 : i % 9 === 5 ? 500 : 200;
        rows.push([
          // Some paths as long as real ones get (a record under a record, ids of 32 characters and more).
          i % 10 === 1 ? `/api/v1/accounts/acc_${"0123456789abcdef".repeat(6)}/contacts/${i}` : `/api/v1/accounts/${i}`,
          status,
          status === 404 ? "not_found" : status === 500 ? "internal_error" : null,
          5 + i,
          new Date(now - back * SLOT + i * 1000).toISOString(),
        ]);
      }
    }
    await db.query(
      `INSERT INTO "AuditLog" ("orgId", "requestId", "method", "path", "status", "errorCode", "durationMs", "createdAt")
       SELECT $1, 'req_e2e_' || r.n, 'GET', r.path, r.status, r.code, r.ms, r.at::timestamp
       FROM jsonb_to_recordset($2::jsonb) AS r(n int, path text, status int, code text, ms int, at text)`,
      [user.orgId, JSON.stringify(rows.map(([path, status, code, ms, at], n) => ({ n, path, status, code, ms, at })))],
    );
  } finally {
    await db.end();
  }
});

test("the chart counts the calls by bucket, a bar narrows the range, the log pages, a request opens, the CSV downloads", async ({
  page,
}) => {
  expect((await callApi(key, "GET", "/usage")).status).toBe(200);
  expect((await callApi(key, "GET", "/accounts/missing")).status).toBe(404);
  await signIn(page, user);
  await page.goto("/settings/usage");
  const chart = page.getByTestId("usage-chart");
  const svg = chart.locator('svg[role="img"]');
  await expect(svg).toBeVisible();
  await expect(svg.locator("title").first()).toHaveText(/^Calls per 30m as 2xx, 3xx, 4xx and 5xx/);
  // 24 hours of 30-minute buckets (49 when the range starts inside a bucket), the ones with calls carry their count.
  const bars = chart.locator("[data-bar]");
  expect(await bars.count()).toBeGreaterThanOrEqual(48);
  await expect(async () => {
    await page.reload();
    const totals = await bars.evaluateAll((nodes) => nodes.map((node) => Number(node.getAttribute("data-total"))));
    expect(totals.filter((total) => total > 0)).toHaveLength(SLOTS_BACK.length + 1);
  }).toPass({ timeout: 20_000 });
  const expected = SLOTS_BACK.reduce((sum, back) => sum + (back === 3 ? IN_BUSY_SLOT : 4), 0) + 2;
  await expect(page.getByTestId("total-requests")).toHaveText(String(expected));
  await expect(page.getByTestId("top-errors")).toContainText("not_found");
  await expect(chart.locator(".visually-hidden table tbody tr")).toHaveCount(await bars.count());
  await screenshot(page, "usage-chart-1280");
  await chart.screenshot({ path: "e2e/artifacts/usage-chart-only-1280.png" });

  // A click on the busiest bar narrows the range to its 30 minutes (a plain link).
  const busiest = chart.locator(`[data-bar][data-total="${IN_BUSY_SLOT}"]`);
  await busiest.locator(".chart-hit").click();
  await expect(page).toHaveURL(/range=custom&from=.*&to=/);
  await expect(chart.locator("[data-bar]")).toHaveCount(1);
  await expect(page.getByTestId("total-requests")).toHaveText(String(IN_BUSY_SLOT));

  // The log of that range: 50 a page, newest first, then the older ones.
  const log = page.getByTestId("audit-log");
  await expect(log.locator("tbody tr")).toHaveCount(50);
  await page.getByTestId("older").click();
  await expect(log.locator("tbody tr")).toHaveCount(IN_BUSY_SLOT - 50);
  await expect(page.getByTestId("older")).toHaveCount(0);

  // A row opens the request's detail.
  const narrowed = page.url();
  await log.locator("tbody tr").first().getByRole("link").click();
  await expect(page.getByTestId("request-detail")).toContainText(/req_e2e_\d+/);
  await expect(page.getByTestId("request-detail")).toContainText("GET /api/v1/accounts/");
  await page.goto(narrowed);
  await expect(page.getByLabel("Range", { exact: true })).toHaveValue("custom");

  // The CSV of the filtered rows: 404s of the narrowed range.
  await page.getByLabel("Status").selectOption("404");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(log.locator("tbody tr")).toHaveCount(IN_BUSY_SLOT / 4);
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("usage-export").click()]);
  expect(download.suggestedFilename()).toMatch(new RegExp(`^usage-${user.slug}-\\d{8}T\\d{4}-\\d{8}T\\d{4}\\.csv$`));
  const bytes = readFileSync((await download.path()) as string);
  expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  const lines = bytes.subarray(3).toString("utf8").trimEnd().split("\n");
  expect(lines[0]).toBe("time,request_id,method,path,query,status,error_code,duration_ms,api_key_id,test");
  expect(lines).toHaveLength(1 + IN_BUSY_SLOT / 4);
  expect(lines.slice(1).every((line) => line.includes(",404,not_found,"))).toBe(true);
});

test("at 390 px the chart keeps its labels readable and its bars clickable", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, user);
  await page.goto("/settings/usage?range=7d");
  const chart = page.getByTestId("usage-chart");
  await expect(chart.locator('svg[role="img"]')).toBeVisible();
  const box = await chart.locator(".chart-plot").boundingBox();
  expect(box?.width).toBeGreaterThan(250);
  // Labels are HTML beside the SVG: their font size does not shrink with the chart.
  const fontSize = await chart
    .locator(".chart-axis span")
    .first()
    .evaluate((node) => Number.parseFloat(getComputedStyle(node).fontSize));
  expect(fontSize).toBeGreaterThanOrEqual(11);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await screenshot(page, "usage-chart-390");
  await chart.screenshot({ path: "e2e/artifacts/usage-chart-only-390.png" });
  await chart.locator("[data-bar]").last().locator(".chart-hit").click();
  await expect(page).toHaveURL(/range=custom/);
  await expect(chart.locator("[data-bar]")).toHaveCount(6);
});

test("the request log is one line a row, long paths cut with the whole in their title, in a frame that scrolls at 390 px", async ({
  page,
}) => {
  await signIn(page, user);
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    await page.goto("/settings/usage?range=7d");
    const log = page.getByTestId("audit-log");
    await expect(log.locator("tbody tr")).toHaveCount(50);
    // One line is about 40 px a row: 50 rows of wrapped paths were 5,800 px tall at 1280 px.
    const heights = await log.locator("tbody tr").evaluateAll((rows) => rows.map((row) => row.clientHeight));
    expect(Math.max(...heights) - Math.min(...heights), `rows of different heights at ${width} px`).toBeLessThanOrEqual(
      1,
    );
    expect((await log.boundingBox())?.height, `the log's height at ${width} px`).toBeLessThan(2_200);
    const long = log.locator("code[title*='/contacts/']").first();
    const whole = (await long.getAttribute("title")) as string;
    expect(whole).toMatch(/^GET \/api\/v1\/accounts\/acc_(0123456789abcdef){6}\/contacts\/\d+$/);
    expect(await long.evaluate((node) => node.scrollWidth > node.clientWidth)).toBe(true);
    const frame = page.locator(".table-wrap").filter({ has: log });
    const scroll = await frame.evaluate((node) => ({
      overflowX: getComputedStyle(node).overflowX,
      scrolls: node.scrollWidth > node.clientWidth,
      hint: getComputedStyle(node, "::before").content,
    }));
    // On a phone the frame scrolls and says so; on a desktop screen the log fits.
    expect(scroll).toEqual(
      width === 390
        ? { overflowX: "auto", scrolls: true, hint: '"Scroll for more columns →"' }
        : { overflowX: "auto", scrolls: false, hint: "none" },
    );
  }
  await screenshot(page, "usage-log-390");
});
