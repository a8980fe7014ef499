# Tollgate's server image: docker build -t tollgate . ; see docs/deploy.md.

# Build stage: every package built (tsup, and Vite for the dashboard) with the dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles its addon when no prebuilt one matches the platform.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY packages/core/package.json packages/core/
COPY packages/storage-kysely/package.json packages/storage-kysely/
COPY packages/storage-sqlite/package.json packages/storage-sqlite/
COPY packages/storage-postgres/package.json packages/storage-postgres/
COPY packages/dashboard/package.json packages/dashboard/
COPY packages/node-server/package.json packages/node-server/
# The root's prepare script would build before the sources are here: install scripts run after.
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3 esbuild
COPY . .
RUN npm run build

# Runtime stage: each package's published files (its package.json `files`: dist, and the SQL the
# storage adapters run) and the production dependencies only, run as `node`.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8787 \
    DATABASE_URL=/data/tollgate.db \
    LOG_FORMAT=json
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/packages/core/package.json packages/core/package.json
COPY --from=build /app/packages/core/dist packages/core/dist
COPY --from=build /app/packages/storage-kysely/package.json packages/storage-kysely/package.json
COPY --from=build /app/packages/storage-kysely/dist packages/storage-kysely/dist
COPY --from=build /app/packages/storage-sqlite/package.json packages/storage-sqlite/package.json
COPY --from=build /app/packages/storage-sqlite/dist packages/storage-sqlite/dist
COPY --from=build /app/packages/storage-sqlite/sql packages/storage-sqlite/sql
COPY --from=build /app/packages/storage-postgres/package.json packages/storage-postgres/package.json
COPY --from=build /app/packages/storage-postgres/dist packages/storage-postgres/dist
COPY --from=build /app/packages/storage-postgres/sql packages/storage-postgres/sql
COPY --from=build /app/packages/dashboard/package.json packages/dashboard/package.json
COPY --from=build /app/packages/dashboard/dist packages/dashboard/dist
COPY --from=build /app/packages/node-server/package.json packages/node-server/package.json
COPY --from=build /app/packages/node-server/dist packages/node-server/dist
COPY --from=build /app/packages/node-server/bin packages/node-server/bin
COPY --from=build /app/packages/node-server/tollgate.config.example.json packages/node-server/tollgate.config.example.json
# Optional packages left out too: the core's optional peer vitest (its testing kit) and the build
# tools that come with it.
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force
# The SQLite addon the build stage compiled (or fetched) on this same base image.
COPY --from=build /app/node_modules/better-sqlite3/build/Release/better_sqlite3.node node_modules/better-sqlite3/build/Release/better_sqlite3.node
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8787
# Ready: storage commits a write and the server is not draining (503 from SIGTERM on).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8787) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "packages/node-server/dist/cli.js", "serve"]
