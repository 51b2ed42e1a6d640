import { SCOPES } from "@/server/auth/scopes";

/** API reference entry point: the machine-readable description and the scopes of spec §5. */
export default function DocsPage() {
  return (
    <>
      <h1>API reference</h1>
      <p>
        The complete description of every operation, with its scope, statuses and envelope, is the OpenAPI 3.1 document
        at <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>. Error codes are described at{" "}
        <a href="/docs/errors">/docs/errors</a>.
      </p>
      <h2>Scopes</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Scope</th>
            <th scope="col">Grants</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(SCOPES).map(([scope, grants]) => (
            <tr key={scope}>
              <td>
                <code>{scope}</code>
              </td>
              <td>{grants}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
