/**
 * The instance's one directory for temporary files: DATA_DIR/tmp, readable by the service's user
 * only (0700, files 0600): report files while they are written, video work, and — the server's
 * TMPDIR points here (src/main.ts) — what libraries put in "the temp directory" (exceljs' copies
 * of worksheets). Each user removes its files when its request or job ends; the directory is
 * emptied at start-up, so what a crash left behind (member names, report rows) does not outlive it.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

/** The system's temp directory, as it was before the server pointed TMPDIR at its own. */
const systemTempDir = os.tmpdir()

/**
 * Runs `work` with the process's temp directory set back to the system's: embedded PostgreSQL's
 * set-up hands initdb — another user, when the server runs as root — a password file there.
 */
export const withSystemTempDir = async <A>(work: () => Promise<A>): Promise<A> => {
  const current = process.env["TMPDIR"]
  process.env["TMPDIR"] = systemTempDir
  try {
    return await work()
  } finally {
    if (current === undefined) delete process.env["TMPDIR"]
    else process.env["TMPDIR"] = current
  }
}

export const privateTempDir = (dataDir: string) => path.join(dataDir, "tmp")

const ensureDir = async (dataDir: string) => {
  const dir = privateTempDir(dataDir)
  await mkdir(dir, { recursive: true, mode: 0o700 })
  // An existing directory keeps its mode: make it private whatever made it.
  await chmod(dir, 0o700)
  return dir
}

/** Empties (or creates) the directory, private; its path. At start-up, before anything uses it. */
export const preparePrivateTempDir = async (dataDir: string) => {
  await rm(privateTempDir(dataDir), { recursive: true, force: true })
  return ensureDir(dataDir)
}

/** A new empty file `name` (0600) in the directory, for a writer to fill; the caller removes it. */
export const privateTempFile = async (dataDir: string, name: string) => {
  const file = path.join(await ensureDir(dataDir), name)
  await writeFile(file, "", { mode: 0o600, flag: "wx" })
  return file
}

/** A new directory (0700) in it, named from `prefix`; the caller removes it. */
export const privateTempSubdir = async (dataDir: string, prefix: string) => mkdtemp(path.join(await ensureDir(dataDir), prefix))
