/**
 * An exclusive lock on a PGlite data directory: PGlite is one process's database, and a second
 * process writing the same files loses data. The lock is a file created with `O_EXCL` holding the
 * owner's PID; a lock whose process is gone is stale and taken over.
 *
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** The lock file's name inside the data directory. */
export const lockFileName = "sightline.lock"

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Takes the lock, or says who holds it. Returns the release function. */
export const acquire = (dataDir: string): { readonly release: () => void } | { readonly heldBy: number } => {
  fs.mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, lockFileName)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(file, "wx")
      fs.writeSync(fd, String(process.pid))
      fs.closeSync(fd)
      return {
        release: () => {
          try {
            if (fs.readFileSync(file, "utf8").trim() === String(process.pid)) fs.unlinkSync(file)
          } catch {
            // already gone
          }
        }
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      const pid = Number(fs.readFileSync(file, "utf8").trim())
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) return { heldBy: pid }
      // A stale lock (its process died without releasing it): take it over.
      fs.rmSync(file, { force: true })
    }
  }
  throw new Error(`cannot lock ${file}`)
}
