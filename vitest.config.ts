import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    // The MinIO-only checks (ListParts, abort: s3rver lacks them) join the run when S3_TEST_ENDPOINT names one.
    include: ["test/**/*.test.ts", ...(process.env["S3_TEST_ENDPOINT"] ? ["test/**/*.minio.ts"] : [])],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    sequence: { concurrent: false }
  }
})
