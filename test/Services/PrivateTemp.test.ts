/** The instance's private directory for temporary files: DATA_DIR/tmp, 0700, files 0600, emptied at start-up. */
import { describe, expect, it } from "@effect/vitest"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { preparePrivateTempDir, privateTempDir, privateTempFile, privateTempSubdir } from "../../src/Services/PrivateTemp.js"

const modeOf = async (file: string) => (await fs.stat(file)).mode & 0o777

describe("private temp directory", () => {
  it("start-up empties what a crash left and makes the directory private; files are 0600, subdirectories 0700", async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "cc-private-temp-"))
    try {
      const dir = privateTempDir(dataDir)
      await fs.mkdir(path.join(dir, "video-job-x"), { recursive: true, mode: 0o755 })
      await fs.chmod(dir, 0o755)
      await fs.writeFile(path.join(dir, "report-1-abc.xlsx"), "Rosa Diaz,1984-07-09", { mode: 0o644 })
      expect(await preparePrivateTempDir(dataDir)).toBe(dir)
      expect(await fs.readdir(dir)).toEqual([])
      expect(await modeOf(dir)).toBe(0o700)

      const file = await privateTempFile(dataDir, "report-2-def.pdf")
      expect(path.dirname(file)).toBe(dir)
      expect(await modeOf(file)).toBe(0o600)
      // A name is never reused: a second writer gets an error, not the first one's file.
      await expect(privateTempFile(dataDir, "report-2-def.pdf")).rejects.toThrow(/EEXIST/)
      const sub = await privateTempSubdir(dataDir, "video-job-")
      expect(path.dirname(sub)).toBe(dir)
      expect(await modeOf(sub)).toBe(0o700)

      // A directory removed under a running instance is made again, private.
      await fs.rm(dir, { recursive: true })
      expect(await modeOf(await privateTempFile(dataDir, "report-3.csv"))).toBe(0o600)
      expect(await modeOf(dir)).toBe(0o700)
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true })
    }
    expect(existsSync(dataDir)).toBe(false)
  })
})
