export const metadata = { title: "TypeScript client · MSP CRM API" };

/** The five-line example of the TypeScript client, as in sdk/README.md. */
const EXAMPLE = `import { createClient, verifyWebhook } from "@msp-crm/sdk";
const crm = createClient({ apiKey: process.env.CRM_KEY!, baseUrl: "https://crm.example.com/api/v1" });
for await (const account of crm.accounts.list({ updatedAfter: "2026-11-01T00:00:00Z" })) console.log(account.name);
const created = await crm.accounts.create({ name: "Northwind Dental" }); // retried safely, never twice
const event = verifyWebhook(rawBody, request.headers, process.env.WEBHOOK_SECRET!); // throws when forged or stale`;

/** Bulk typed by mode: all-or-none resolves to the 200 shape, partial to the 207 shape. */
const BULK = `const whole = await crm.accounts.bulk({ accounts }); // { created, updated, total, results }
const partial = await crm.accounts.bulk({ accounts }, { mode: "partial" }); // { mode, created, updated, failed, total, results }
for (const item of partial.results) if (item.status === "error") console.log(item.index, item.error?.message);`;

/** The TypeScript client: what it does in five lines, then its resource methods. */
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
      <h2>Resource methods</h2>
      <p>
        Every resource has its methods, generated from the OpenAPI document: <code>crm.accounts.list(query)</code>,{" "}
        <code>.get(id)</code>, <code>.create(body)</code>, <code>.update(id, body)</code>, <code>.delete(id)</code> and{" "}
        <code>.bulk(body)</code>, and the same for contacts, deals, tasks, devices, touchpoints, notes, health scores,
        events (<code>list</code>, <code>get</code>, <code>follow</code>) and webhook endpoints. Arguments come in one
        order: path parameters, the body, the query, then per-call options such as{" "}
        <code>{'{ headers: { "If-Match": etag } }'}</code>.
      </p>
      <pre>
        <code>{BULK}</code>
      </pre>
      <p>
        The path-typed calls stay beside them: <code>crm.GET("/accounts/{"{id}"}", ...)</code>, <code>crm.POST</code>,{" "}
        <code>crm.PATCH</code>, <code>crm.DELETE</code> and <code>crm.list(path, query)</code>.
      </p>
    </>
  );
}
