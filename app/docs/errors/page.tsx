import { ERROR_CODES } from "../../../server/errors";

/** The error reference every `docsUrl` points at (`/docs/errors#<code>`, docs/api-contract.md §2.1, §7). */
export default function ErrorsPage() {
  return (
    <>
      <h1>Error codes</h1>
      <p>
        Every error response is{" "}
        <code>{"{ success: false, error: { code, message, docsUrl, details? }, requestId, timestamp }"}</code>. Quote
        the <code>requestId</code> (also in the <code>X-Request-Id</code> header) when you contact support.
      </p>
      {Object.entries(ERROR_CODES).map(([code, entry]) => (
        <section key={code} id={code}>
          <h2>
            <code>{code}</code> — HTTP {entry.status}
          </h2>
          <p>
            <strong>{entry.title}.</strong> {entry.description}
          </p>
        </section>
      ))}
    </>
  );
}
