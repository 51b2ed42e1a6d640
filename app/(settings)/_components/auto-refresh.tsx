"use client";

import { useRouter } from "next/navigation";
import { useEffect } from "react";

/**
 * Re-renders the page from the server every `everyMs` while it is shown (a replay's progress), keeping what forms
 * hold. Without JavaScript the page's own refresh link does the same.
 */
export function AutoRefresh({ everyMs = 3_000 }: { everyMs?: number }) {
  const router = useRouter();
  useEffect(() => {
    const timer = setInterval(() => router.refresh(), everyMs);
    return () => clearInterval(timer);
  }, [router, everyMs]);
  return null;
}
