/** Landing page: where the API, its description and its docs live. */
export default function Home() {
  return (
    <>
      <h1>MSP CRM public API</h1>
      <ul>
        <li>
          Base URL: <code>/api/v1</code> — status at <a href="/api/v1/status">/api/v1/status</a>
        </li>
        <li>
          OpenAPI 3.1: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>
        </li>
        <li>
          Reference: <a href="/docs">/docs</a>, error codes: <a href="/docs/errors">/docs/errors</a>
        </li>
      </ul>
    </>
  );
}
