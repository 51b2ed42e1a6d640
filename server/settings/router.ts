import { auditRouter } from "../identity/audit-trail/settings-procedures";
import { directoryRouter } from "../identity/directory/settings-procedures";
import { oauthRouter } from "../identity/oauth/settings-procedures";
import { can, type Permission, STATEMENTS } from "../identity/roles";
import { securityRouter } from "../identity/security/settings-procedures";
import {
  confirmationMethod,
  isRecentlyAuthenticated,
  mayChangeSignInFactors,
  mustSetUpSecondFactor,
  secondFactorNeeded,
  strongestFactor,
} from "../identity/session";
import { ssoRouter } from "../identity/sso/settings-procedures";
import { teamRouter } from "../identity/team/settings-procedures";
import { apiKeysRouter } from "../platform/api-keys/settings-procedures";
import { usageRouter } from "../platform/request-log/settings-procedures";
import { customFieldsRouter } from "../records/custom-fields/settings-procedures";
import { webhooksRouter } from "../webhooks/settings-procedures";
import { createCallerFactory, memberProcedure, router } from "./trpc";

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
  oauth: oauthRouter,
  webhooks: webhooksRouter,
  usage: usageRouter,
  team: teamRouter,
  security: securityRouter,
  sso: ssoRouter,
  audit: auditRouter,
  customFields: customFieldsRouter,
  directory: directoryRouter,
});

/** Type of {@link settingsRouter}, for clients. */
export type SettingsRouter = typeof settingsRouter;

/** Server-side caller of {@link settingsRouter}: `createSettingsCaller({ request })`. */
export const createSettingsCaller = createCallerFactory(settingsRouter);
