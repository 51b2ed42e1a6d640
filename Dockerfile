# The MSP CRM public API as a container image (README: "Deploy"). Two stages: `build` installs every dependency and
# runs `npm run build` (Next.js, and the server, migrations and admin command compiled to dist/ with the Prisma client
# inside); `runtime` holds production dependencies and the build output only, runs as the unprivileged `node` user and
# starts the compiled server with Node alone. test/packaging/container.test.ts performs the runtime stage outside
# Docker (its COPY lines, its `npm ci`, its CMD and HEALTHCHECK), so a file missing here fails CI.

FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1 \
    PRISMA_SCHEMA_ENGINE_BINARY=/bin/true
# Dependencies first, so a change of the sources alone reuses this layer (preinstall checks the Node version,
# postinstall generates the Prisma client).
COPY package.json package-lock.json prisma.config.ts ./
COPY scripts/install-notice.mjs ./scripts/
COPY prisma ./prisma
RUN npm ci --no-audit --no-fund
COPY . .
# Next.js's build cache only speeds up the next build; the image does not need it.
RUN npm run build && rm -rf .next/cache

FROM node:24.21.0-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1 \
    PORT=3000 \
    DATA_DIR=/app/.data
COPY package.json package-lock.json ./
# Production dependencies only. No install scripts: the Prisma client is already compiled into dist/ and .next/, and
# postinstall's `prisma generate` would need the prisma CLI, a development dependency. `--omit=optional` too: npm keeps
# a development tool that a production package names as an optional peer (better-auth names vitest, which brings vite
# and tsx), and the server needs none of the optional packages (build-time compilers, image optimisation).
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/.next ./.next
COPY --from=build /app/next.config.mjs ./
COPY --from=build /app/prisma/migrations ./prisma/migrations
# The embedded database's folder, for a container run without DATABASE_URL (a trial; compose sets DATABASE_URL).
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 3000
# Slim images have no curl: Node's fetch asks the liveness probe.
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 3000}/livez`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--max-semi-space-size=16", "--heap-growing-percent=30", "--no-wasm-tier-up", "--no-wasm-dynamic-tiering", "dist/serve.js"]
