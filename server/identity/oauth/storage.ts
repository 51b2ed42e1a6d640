// How the OAuth plugin's rows meet Prisma (docs/architecture.md, "The MCP server"): the lists the plugin may leave null
// are jsonb columns (prisma/schema.prisma), and Prisma refuses a plain null for a jsonb column (it wants DbNull).

import { Prisma } from "../../db/generated/client";

/** The plugin's nullable list fields, by Prisma delegate. */
const NULLABLE_LISTS: Record<string, ReadonlySet<string>> = {
  oauthClient: new Set([
    "scopes",
    "clientCredentialsScopes",
    "contacts",
    "postLogoutRedirectUris",
    "grantTypes",
    "responseTypes",
  ]),
  oauthResource: new Set(["allowedScopes"]),
  oauthRefreshToken: new Set(["resources", "requestedUserInfoClaims"]),
  oauthAccessToken: new Set(["resources", "requestedUserInfoClaims"]),
  oauthConsent: new Set(["resources", "requestedUserInfoClaims"]),
};

const WRITES = new Set(["create", "update", "updateMany", "upsert", "createMany"]);

function withDbNull(data: unknown, fields: ReadonlySet<string>): unknown {
  if (Array.isArray(data)) return data.map((row) => withDbNull(row, fields));
  if (!data || typeof data !== "object") return data;
  const copy: Record<string, unknown> = { ...(data as Record<string, unknown>) };
  for (const field of fields) if (copy[field] === null) copy[field] = Prisma.DbNull;
  return copy;
}

/**
 * The Prisma delegate better-auth's adapter gets for `model`: for the OAuth plugin's tables, one whose writes store a
 * null list as SQL NULL; every other delegate as it is.
 */
export function adapterDelegate(model: string, delegate: unknown): unknown {
  const fields = NULLABLE_LISTS[model];
  if (!fields || !delegate || typeof delegate !== "object") return delegate;
  return new Proxy(delegate, {
    get(target, method) {
      const original = Reflect.get(target, method);
      if (typeof original !== "function") return original;
      if (typeof method !== "string" || !WRITES.has(method)) return original.bind(target);
      return (args: { data?: unknown; create?: unknown; update?: unknown } = {}) =>
        original.call(target, {
          ...args,
          ...("data" in args ? { data: withDbNull(args.data, fields) } : {}),
          ...("create" in args ? { create: withDbNull(args.create, fields) } : {}),
          ...("update" in args ? { update: withDbNull(args.update, fields) } : {}),
        });
    },
  });
}
