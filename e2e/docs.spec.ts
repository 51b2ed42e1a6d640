// The API reference at /docs: rendered from /api/v1/openapi.json by Scalar's bundle served from this app,
// with links to the error codes and the webhook guide, and no request to any other host.
import { expect, test } from "@playwright/test";
import { baseUrl, screenshot } from "./helpers";

test("/docs renders the operations from the OpenAPI document without loading anything from elsewhere", async ({
  page,
}) => {
  const origin = new URL(baseUrl()).origin;
  const foreign: string[] = [];
  page.on("request", (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith("data:") && !url.startsWith("blob:")) foreign.push(url);
  });
  const scripts: string[] = [];
  page.on("response", (response) => {
    if (response.request().resourceType() === "script") scripts.push(response.url());
  });

  await page.goto("/docs");
  await expect(page.getByRole("heading", { name: "MSP CRM Public API" })).toBeVisible({ timeout: 30_000 });
  // Every operation is in the sidebar; following one shows its section with its title.
  await expect(page.getByText("Create an account").first()).toBeVisible();
  await page.getByText("List accounts").first().click();
  await expect(page.getByRole("heading", { name: "List accounts" })).toBeVisible();
  expect(scripts).toContain(`${origin}/docs/scalar.js`);

  const nav = page.getByRole("navigation", { name: "Site" });
  await expect(nav.getByRole("link", { name: "Error codes" })).toHaveAttribute("href", "/docs/errors");
  await expect(nav.getByRole("link", { name: "Webhook verification" })).toHaveAttribute("href", "/docs/webhooks");
  await screenshot(page, "docs", false);
  // Give late requests (fonts, telemetry) a moment to show up.
  await page.waitForTimeout(1_000);
  expect(foreign).toEqual([]);

  await nav.getByRole("link", { name: "Error codes" }).click();
  await expect(page).toHaveURL(/\/docs\/errors$/);
  await expect(page.getByRole("heading", { name: /insufficient_scope/ })).toBeVisible();
  await screenshot(page, "docs-errors");
});

test("the landing page links to sign-in and the docs", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("link", { name: "Sign in" })).toHaveAttribute("href", "/signin");
  await expect(page.getByRole("main").getByRole("link", { name: "API reference" })).toHaveAttribute("href", "/docs");
  await screenshot(page, "landing");
  await page.getByRole("link", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Sign in to the settings" })).toBeVisible();
});
