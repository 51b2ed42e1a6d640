import { serve } from "inngest/next";
import { functions, inngest } from "../../../inngest";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * Inngest's endpoint (docs/architecture.md, "Webhooks and the outbox"): GET introspection, PUT sync (registers the
 * functions), POST runs a function step. In cloud mode every call is verified with `INNGEST_SIGNING_KEY`;
 * `INNGEST_DEV=1` is for a local Dev Server.
 */
export const { GET, POST, PUT } = serve({ client: inngest, functions });
