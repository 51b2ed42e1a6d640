/** Landing page: where the API, its description, its docs and the settings area live. */
export default function Home() {
  return (
    <>
      <h1>MSP CRM public API</h1>
      <p>
        A JSON REST API for the accounts, contacts, deals, devices, tasks, notes, touchpoints, health scores and MRR of
        a managed-service provider, with webhooks when data changes.
      </p>
      <div className="cards">
        <div className="card">
          <h2>Settings</h2>
          <p>Create and rotate API keys, register webhook endpoints and see your organisation's usage.</p>
          <p>
            <a className="button" href="/signin">
              Sign in
            </a>
          </p>
        </div>
        <div className="card">
          <h2>Documentation</h2>
          <ul>
            <li>
              <a href="/docs">API reference</a> (every operation, its scope and responses)
            </li>
            <li>
              <a href="/docs/errors">Error codes</a>
            </li>
            <li>
              <a href="/docs/webhooks">Verifying webhook signatures</a>
            </li>
            <li>
              <a href="/docs/sync">Keeping a copy in sync</a> (the events feed)
            </li>
            <li>
              <a href="/docs/sdk">TypeScript client</a>
            </li>
          </ul>
        </div>
        <div className="card">
          <h2>Machine-readable</h2>
          <ul>
            <li>
              Base URL: <code>/api/v1</code>, status at <a href="/api/v1/status">/api/v1/status</a>
            </li>
            <li>
              OpenAPI 3.1: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>
            </li>
            <li>
              Postman collection: <a href="/api/v1/postman.json">/api/v1/postman.json</a>
            </li>
          </ul>
        </div>
      </div>
    </>
  );
}
