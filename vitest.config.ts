import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    // The MinIO-only checks (ListParts, abort: s3rver lacks them) join the run when S3_TEST_ENDPOINT names one.
    include: ["test/**/*.test.ts", ...(process.env["S3_TEST_ENDPOINT"] ? ["test/**/*.minio.ts"] : [])],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Both cores (vitest's default leaves one idle), and one module graph per worker: every file
    // imports the whole app, so loading it afresh per file cost more than the tests themselves.
    // Each file still gets its own app layer and its own database.
    maxWorkers: 2,
    poolOptions: { forks: { isolate: false } },
    sequence: { concurrent: false }
  }
})
