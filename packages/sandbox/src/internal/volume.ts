/**
 * A workspace's own filesystem: a sparse ext4 image, sized to the quota, loop-mounted where the
 * workspace is. The kernel refuses a write past it (ENOSPC), so one run cannot fill the host's disk
 * however many files it writes: the quota holds while the code runs, not only between runs.
 *
 * Mounting needs root (the server then also gives each sandbox its own user); as any other user the
 * workspace stays a plain directory and the quota is checked between runs. `probe` tells once (at
 * the first sandbox) which it is, so a host that cannot mount (no loop devices in a container, no
 * `mkfs.ext4`) says so once rather than at every sandbox.
 *
 * The image has no journal (a workspace is scratch, discarded with its sandbox) and is mounted with
 * `discard`, so deleted files give their blocks back to the host's disk.
 *
 * @internal
 */
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as NodePath from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

/**
 * What the filesystem holds beyond the quota: ext4's own bookkeeping, and room for the last write of
 * a run to end past the quota, so that the between-run check still sees a full workspace and refuses
 * the next run until files go. 1/16 of the quota and 4 MiB.
 */
export const imageBytes = (quotaBytes: number) => quotaBytes + Math.ceil(quotaBytes / 16) + 4 * 1024 ** 2

const failure = (error: unknown) => {
  const e = error as { stderr?: string; message?: string }
  return (e.stderr ?? "").trim() || e.message || String(error)
}

/**
 * Makes the image at `image` and mounts it at `target` (an existing, empty directory), private to the
 * server. The workspace and its trash are directories in it: a deletion moves its target into the
 * trash first, which only works within one filesystem.
 */
export const mount = async (image: string, target: string, quotaBytes: number) => {
  const handle = await fs.open(image, "wx", 0o600)
  try {
    await handle.truncate(imageBytes(quotaBytes))
  } finally {
    await handle.close()
  }
  await run("mkfs.ext4", ["-q", "-F", "-m", "0", "-O", "^has_journal", image], { timeout: 30_000 })
  await run("mount", ["-t", "ext4", "-o", "loop,nosuid,nodev,discard", image, target], { timeout: 30_000 })
  await fs.chmod(target, 0o700)
}

/**
 * Detaches the filesystem at `target`. Lazily: a process of the sandbox that is still dying may hold
 * a file open, and the loop device is freed when the last one goes. Nothing mounted is no error.
 */
export const unmount = (target: string) =>
  run("umount", ["-l", target], { timeout: 30_000 }).then(() => undefined, () => undefined)

/** The mount points at or below `directory` (deepest first), from the kernel's own table. */
export const mountsUnder = async (directory: string): Promise<ReadonlyArray<string>> => {
  const table = await fs.readFile("/proc/self/mountinfo", "utf8").catch(() => "")
  const prefix = directory.endsWith("/") ? directory : `${directory}/`
  return table
    .split("\n")
    // The fifth field is the mount point, with space, tab, newline and backslash octal-escaped.
    .map((line) => line.split(" ")[4])
    .filter((point): point is string => point !== undefined)
    .map((point) => point.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((point) => point === directory || point.startsWith(prefix))
    .sort((a, b) => b.length - a.length)
}

/**
 * Whether workspaces get their own filesystem here: `undefined` when they do, or why not. Tried once
 * with a small image in `directory`, which it leaves as it found it.
 */
export const probe = async (directory: string): Promise<string | undefined> => {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) {
    return "the server does not run as root, so it cannot mount a filesystem for each workspace"
  }
  const base = NodePath.join(directory, `.volume-probe-${randomBytes(4).toString("hex")}`)
  const target = `${base}.d`
  try {
    await fs.mkdir(target, { mode: 0o700 })
    await mount(`${base}.img`, target, 1024 ** 2)
    return undefined
  } catch (error) {
    return `a workspace filesystem could not be mounted: ${failure(error)}`
  } finally {
    await unmount(target)
    await fs.rm(target, { recursive: true, force: true }).catch(() => undefined)
    await fs.rm(`${base}.img`, { force: true }).catch(() => undefined)
  }
}
