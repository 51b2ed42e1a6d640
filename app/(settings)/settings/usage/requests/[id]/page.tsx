import { notFound } from "next/navigation";
import { Time } from "../../../../_components/time";
import { formatDuration } from "../../../../_lib/format";
import { requireMember, settingsCaller } from "../../../../_lib/session";

export const metadata = { title: "Request · Usage · Settings" };

/**
 * One API call of the organisation's request log (docs/api-contract.md §1.2): request id, time, key, method, path and
 * query, status, error code and duration. Another organisation's call is the not-found page.
 */
export default async function RequestPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  await requireMember(`/settings/usage/requests/${id}`);
  const caller = await settingsCaller();
  const [entry, keys] = await Promise.all([caller.usage.request({ id }).catch(() => null), caller.apiKeys.list()]);
  if (!entry) notFound();
  const key = entry.apiKeyId ? keys.find((candidate) => candidate.id === entry.apiKeyId) : undefined;
  return (
    <>
      <p>
        <a href="/settings/usage">← Usage</a>
      </p>
      <h1>Request</h1>
      <dl className="meta" data-testid="request-detail">
        <dt>Request id</dt>
        <dd>
          <code>{entry.requestId}</code>
        </dd>
        <dt>Time</dt>
        <dd>
          <Time value={entry.createdAt} />
        </dd>
        <dt>Key</dt>
        <dd>
          {key ? `${key.name} (${key.prefix}…)` : entry.apiKeyId ? <code>{entry.apiKeyId}</code> : "— (no valid key)"}
          {entry.isTest ? <span className="badge test"> test</span> : null}
        </dd>
        <dt>Request</dt>
        <dd className="breakable">
          <code>
            {entry.method} {entry.path}
            {entry.query ? `?${entry.query}` : ""}
          </code>
        </dd>
        <dt>Status</dt>
        <dd>
          <span className={`badge ${entry.status >= 400 ? "error" : "ok"}`}>{entry.status}</span>
        </dd>
        <dt>Error code</dt>
        <dd>{entry.errorCode ? <code>{entry.errorCode}</code> : "—"}</dd>
        <dt>Duration</dt>
        <dd>{formatDuration(entry.durationMs)}</dd>
      </dl>
    </>
  );
}
