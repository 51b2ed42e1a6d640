import { can, type Permission, STATEMENTS } from "../../auth/roles";
import {
  confirmationMethod,
  isRecentlyAuthenticated,
  mayChangeSignInFactors,
  mustSetUpSecondFactor,
  secondFactorNeeded,
  strongestFactor,
} from "../../services/settings-session";
import { apiKeysRouter } from "./api-keys";
import { auditRouter } from "./audit";
import { customFieldsRouter } from "./custom-fields";
import { securityRouter } from "./security";
import { teamRouter } from "./team";
import { createCallerFactory, memberProcedure, router } from "./trpc";
import { usageRouter } from "./usage";
import { webhooksRouter } from "./webhooks";

const PERMISSIONS = Object.entries(STATEMENTS).flatMap(([resource, actions]) =>
  actions.map((action) => `${resource}:${action}` as Permission),
);

/**
 * The settings UI's tRPC router (docs/architecture.md, "Settings: sign-in, team and roles"): served at `/api/trpc`
 * and called by the server-rendered pages through {@link createSettingsCaller}. Every procedure acts on the session's
 * organisation as the member's role allows (`authorize` in ./trpc.ts).
 */
export const settingsRouter = router({
  /**
   * The signed-in member: user, organisation, role, every permission with whether the role holds it (the pages hide
   * what it does not), whether a step-up action may run now, whether the member may change how they sign in now
   * (`mayChangeSignInFactors`: a step-up with their `strongestFactor`, `passkey`, `authenticator app` or `password`),
   * what the organisation's two-factor requirement still asks (`set-up`, `confirm` or null), how the member confirms
   * it's them (`code`, `passkey` or `password`), and whether this session proved a second factor.
   */
  me: memberProcedure.query(({ ctx }) => {
    const { member } = ctx;
    return {
      user: { id: member.user.id, email: member.user.email, name: member.user.name },
      org: member.org,
      role: member.role,
      permissions: Object.fromEntries(
        PERMISSIONS.map((permission) => [permission, can(member.role, permission)]),
      ) as Record<Permission, boolean>,
      recentlyAuthenticated: isRecentlyAuthenticated(member),
      mayChangeSignInFactors: mayChangeSignInFactors(member),
      strongestFactor: strongestFactor(member),
      mustSetUpSecondFactor: mustSetUpSecondFactor(member),
      secondFactorNeeded: secondFactorNeeded(member),
      confirmWith: confirmationMethod(member),
      secondFactor: {
        totp: member.user.twoFactorEnabled,
        passkeys: member.user.passkeys,
        session: member.session.secondFactor,
      },
    };
  }),
  apiKeys: apiKeysRouter,
  webhooks: webhooksRouter,
  usage: usageRouter,
  team: teamRouter,
  security: securityRouter,
  audit: auditRouter,
  customFields: customFieldsRouter,
});

/** Type of {@link settingsRouter}, for clients. */
export type SettingsRouter = typeof settingsRouter;

/** Server-side caller of {@link settingsRouter}: `createSettingsCaller({ request })`. */
export const createSettingsCaller = createCallerFactory(settingsRouter);
