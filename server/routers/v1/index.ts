import { router } from "../../trpc";
import { accountsRouter } from "./accounts";
import { statusRouter } from "./status";

/** The public API v1: every procedure here is a REST operation under `/api/v1` (spec §4). */
export const v1Router = router({
  status: statusRouter,
  accounts: accountsRouter,
});

/** Type of the v1 router. */
export type V1Router = typeof v1Router;
