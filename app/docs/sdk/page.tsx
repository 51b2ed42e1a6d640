export const metadata = { title: "TypeScript client · MSP CRM API" };

/** The five-line example of the TypeScript client (issue #14), as in sdk/README.md. */
const EXAMPLE = `import { createClient, verifyWebhook } from "@msp-crm/sdk";
const crm = createClient({ apiKey: process.env.CRM_KEY!, baseUrl: "https://crm.example.com/api/v1" });
for await (const account of crm.list("/accounts", { updatedAfter: "2026-11-01T00:00:00Z" })) console.log(account.name);
const created = await crm.POST("/accounts", { body: { name: "Northwind Dental" } }); // retried safely, never twice
const event = verifyWebhook(rawBody, request.headers, process.env.WEBHOOK_SECRET!); // throws when forged or stale`;

/** The TypeScript client: what it does in five lines. */
export default function SdkPage() {
  return (
    <>
      <h1>TypeScript client</h1>
      <p>
        <code>@msp-crm/sdk</code> (in <code>sdk/</code> of the repository; Node 22 or later, ESM) types every operation
        from the OpenAPI document, pages with <code>for await</code>, retries 429, 503 and network errors with one
        Idempotency-Key per write so a retried create is never done twice, throws <code>ApiError</code> with the error
        envelope, verifies webhook signatures and follows the <a href="/docs/sync">events feed</a>.
      </p>
      <pre>
        <code>{EXAMPLE}</code>
      </pre>
    </>
  );
}
