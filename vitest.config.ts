import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    // The MinIO-only checks (ListParts, abort: s3rver lacks them) join the run when S3_TEST_ENDPOINT names one.
    include: ["test/**/*.test.ts", ...(process.env["S3_TEST_ENDPOINT"] ? ["test/**/*.minio.ts"] : [])],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    // One worker (the PostgreSQL server needs the other core: with two, the harness's race mode
    // saw lock waits time out) and one module graph for it: every file imports the whole app, so
    // loading it afresh per file cost more than the tests themselves. Each file still gets its own
    // app layer and its own database.
    maxWorkers: 1,
    poolOptions: { forks: { isolate: false } },
    sequence: { concurrent: false }
  }
})
