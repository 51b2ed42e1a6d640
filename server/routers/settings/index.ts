import { apiKeysRouter } from "./api-keys";
import { createCallerFactory, router, sessionProcedure } from "./trpc";
import { usageRouter } from "./usage";
import { webhooksRouter } from "./webhooks";

/**
 * The settings UI's tRPC router (DESIGN.md §1): session-authenticated, served at `/api/trpc` and called by the
 * server-rendered pages through {@link createSettingsCaller}. Every procedure acts on the session's organisation.
 */
export const settingsRouter = router({
  /** The signed-in user and their organisation. */
  me: sessionProcedure.query(({ ctx }) => {
    const { sessionId: _sessionId, ...me } = ctx.session;
    return me;
  }),
  apiKeys: apiKeysRouter,
  webhooks: webhooksRouter,
  usage: usageRouter,
});

/** Type of {@link settingsRouter}, for clients. */
export type SettingsRouter = typeof settingsRouter;

/** Server-side caller of {@link settingsRouter}: `createSettingsCaller({ sessionToken })`. */
export const createSettingsCaller = createCallerFactory(settingsRouter);
