"use client";

import { useActionState } from "react";
import { FormResult } from "../../../_components/form-result";
import { type FormState, IDLE } from "../../../_lib/form-state";

/**
 * "Replay failed since…" (docs/api-contract.md §6.10) in two steps that work without JavaScript: count what would be
 * sent (a dry run), then start the replay of exactly that window. Times are UTC.
 */
export function ReplayForm({
  endpointId,
  defaultSince,
  countAction,
  startAction,
}: {
  endpointId: string;
  /** `YYYY-MM-DDTHH:MM` in UTC: when the endpoint was disabled, else 24 hours ago. */
  defaultSince: string;
  countAction: (state: FormState, form: FormData) => Promise<FormState>;
  startAction: (state: FormState, form: FormData) => Promise<FormState>;
}) {
  const [counted, count, counting] = useActionState(countAction, IDLE);
  const [started, start, starting] = useActionState(startAction, IDLE);
  const kept = counted.values ?? {};
  const matched = counted.status === "ok" ? Number(kept.matched ?? 0) : 0;
  const text = (name: string) => (typeof kept[name] === "string" ? (kept[name] as string) : undefined);
  return (
    <div className="stack">
      <form action={count} className="stack" data-testid="replay-count-form">
        <input type="hidden" name="id" value={endpointId} />
        <div className="field">
          <label htmlFor="replay-since">Since (UTC)</label>
          <input
            id="replay-since"
            name="since"
            type="datetime-local"
            required
            defaultValue={counted.status === "error" ? (text("since") ?? defaultSince) : defaultSince}
          />
        </div>
        <div className="field">
          <label htmlFor="replay-until">
            Until (UTC) <span className="hint">(optional; default now)</span>
          </label>
          <input id="replay-until" name="until" type="datetime-local" />
        </div>
        <label className="choice">
          <input type="checkbox" name="missing" />
          <span className="choice-text">
            <span>Also events it never got</span>
            <span className="hint">
              Events its subscription takes that were not delivered at all, because it was disabled when they happened.
            </span>
          </span>
        </label>
        <div>
          <button type="submit" className="secondary" disabled={counting}>
            {counting ? "Counting…" : "Count deliveries to replay"}
          </button>
        </div>
        <FormResult state={counted} />
      </form>
      {matched > 0 ? (
        <form action={start} data-testid="replay-start-form">
          <input type="hidden" name="id" value={endpointId} />
          <input type="hidden" name="since" value={text("since") ?? ""} />
          <input type="hidden" name="until" value={text("until") ?? ""} />
          {(Array.isArray(kept.statuses) ? kept.statuses : []).map((status) => (
            <input key={status} type="hidden" name="statuses" value={status} />
          ))}
          <p className="hint">
            They are sent again with their event ids, signed with the current secret, at most 10 a second, beside the
            endpoint's new deliveries. A replay's failures do not count towards disabling it.
          </p>
          <button type="submit" disabled={starting || started.status === "ok"}>
            {starting
              ? "Starting…"
              : `Replay ${matched.toLocaleString("en-GB")} ${matched === 1 ? "delivery" : "deliveries"}`}
          </button>
          <FormResult state={started} />
        </form>
      ) : null}
    </div>
  );
}
