"use client";

import { useEffect, useState } from "react";

/**
 * Copies `value` to the clipboard. Rendered only once scripts run (without JavaScript the value stays selectable
 * text); the outcome is announced in a polite live region.
 */
export function CopyButton({ value, label = "Copy" }: { value: string; label?: string }) {
  const [ready, setReady] = useState(false);
  const [announcement, setAnnouncement] = useState("");
  useEffect(() => setReady(true), []);
  if (!ready) return null;

  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setAnnouncement("Copied to the clipboard");
    } catch {
      setAnnouncement("Copy failed: select the text and copy it by hand");
    }
    setTimeout(() => setAnnouncement(""), 4000);
  }

  return (
    <span className="actions">
      <button type="button" className="secondary" onClick={copy}>
        {label}
      </button>
      <span role="status" aria-live="polite" className="muted">
        {announcement}
      </span>
    </span>
  );
}
