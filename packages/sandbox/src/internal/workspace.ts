/**
 * File operations on a sandbox workspace from the server's side, safe against the code running in the
 * sandbox. That code owns the workspace and can turn any directory into a symlink at any moment, while
 * the server may run as root: a path checked and then used could lead anywhere by the time it is used.
 *
 * So every operation walks the path one segment at a time from the workspace's own directory
 * descriptor, opening each step with `O_NOFOLLOW`, and addresses the next step through
 * `/proc/self/fd/<fd>/<name>` (Linux's magic links resolve to the opened inode, which gives `openat`
 * semantics that node lacks). A symlink on the way is refused. Deletions move the target out of the
 * sandbox's view first (into a trash directory it cannot reach), and only then remove it recursively.
 *
 * Every open is also `O_NONBLOCK`, and what it opened is checked with `fstat` before it is read: a
 * FIFO the sandbox made would otherwise block the open (and a thread of libuv's pool with it, which
 * sign-in, file operations and sandbox starts of every organization share) until a writer came.
 *
 * @internal
 */
import { randomBytes } from "node:crypto"
import { constants as fsConstants } from "node:fs"
import * as fs from "node:fs/promises"
import * as NodePath from "node:path"

/** Why a workspace path cannot be used; the runtime turns it into `InvalidRequest`. */
export class PathRefused extends Error {}

/** A directory entry. */
export interface Entry {
  readonly name: string
  readonly sizeBytes: number
  readonly isDir: boolean
  readonly modifiedAt: Date
}

/** Who should own what the server writes (the sandbox's own user), when the server runs as root. */
export interface Owner {
  readonly uid: number
  readonly gid: number
}

const { O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY } = fsConstants

const fdPath = (handle: fs.FileHandle, name?: string) =>
  name === undefined ? `/proc/self/fd/${handle.fd}` : `/proc/self/fd/${handle.fd}/${name}`

const isCode = (error: unknown, ...codes: ReadonlyArray<string>) =>
  typeof error === "object" && error !== null && codes.includes((error as { code?: string }).code ?? "")

const openDir = (path: string) => fs.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK)

/**
 * Opens the directory that `segments` name below `root` without following a symlink anywhere. With
 * `create`, missing directories are made (owned by `owner`); without, a missing one is `undefined`.
 */
const openParent = async (
  root: string,
  segments: ReadonlyArray<string>,
  create: boolean,
  owner: Owner | undefined
): Promise<fs.FileHandle | undefined> => {
  let current = await openDir(root)
  try {
    for (const segment of segments) {
      let next: fs.FileHandle
      try {
        next = await openDir(fdPath(current, segment))
      } catch (error) {
        if (isCode(error, "ENOENT") && create) {
          await fs.mkdir(fdPath(current, segment), { mode: 0o755 }).catch((e) => {
            if (!isCode(e, "EEXIST")) throw e
          })
          next = await openDir(fdPath(current, segment))
          if (owner !== undefined) await next.chown(owner.uid, owner.gid)
        } else if (isCode(error, "ENOENT")) {
          await current.close()
          return undefined
        } else if (isCode(error, "ELOOP", "ENOTDIR")) {
          throw new PathRefused(`${segment} is a file or a symlink, not a directory`)
        } else {
          throw error
        }
      }
      await current.close()
      current = next
    }
    return current
  } catch (error) {
    await current.close().catch(() => undefined)
    throw error
  }
}

/** An existing directory, or `undefined` when it is missing or a file or a symlink stands in its way. */
const openExisting = (root: string, segments: ReadonlyArray<string>) =>
  openParent(root, segments, false, undefined).catch((error) => {
    if (error instanceof PathRefused) return undefined
    throw error
  })

const split = (path: string) => {
  const segments = path.split("/").filter((s) => s !== "")
  return { parents: segments.slice(0, -1), name: segments[segments.length - 1] }
}

/** The entries of a directory (dotfiles hidden), or `undefined` when there is no such directory. */
export const list = async (root: string, path: string): Promise<ReadonlyArray<Entry> | undefined> => {
  const segments = path.split("/").filter((s) => s !== "")
  const dir = await openExisting(root, segments)
  if (dir === undefined) return undefined
  try {
    const names = await fs.readdir(fdPath(dir))
    const entries: Array<Entry> = []
    for (const name of names) {
      if (name.startsWith(".")) continue
      const stat = await fs.lstat(fdPath(dir, name)).catch(() => undefined)
      if (stat === undefined || !(stat.isFile() || stat.isDirectory())) continue
      entries.push({
        name,
        isDir: stat.isDirectory(),
        sizeBytes: stat.isDirectory() ? 0 : stat.size,
        modifiedAt: stat.mtime
      })
    }
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  } finally {
    await dir.close()
  }
}

/** The bytes of a regular file, or `undefined` when there is none (a symlink or a directory is none). */
export const read = async (root: string, path: string): Promise<Uint8Array | undefined> => {
  const { name, parents } = split(path)
  if (name === undefined) return undefined
  const dir = await openExisting(root, parents)
  if (dir === undefined) return undefined
  try {
    const file = await fs.open(fdPath(dir, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK).catch((error) => {
      if (isCode(error, "ENOENT", "ELOOP", "ENOTDIR")) return undefined
      throw error
    })
    if (file === undefined) return undefined
    try {
      // Only a regular file is read: a FIFO, a socket or a device is no file of the workspace.
      if (!(await file.stat()).isFile()) return undefined
      return new Uint8Array(await file.readFile())
    } finally {
      await file.close()
    }
  } finally {
    await dir.close()
  }
}

/** Makes a directory and its parents (owned by `owner`); a file or a symlink in the way is refused. */
export const makeDirectory = async (root: string, path: string, owner: Owner | undefined) => {
  const dir = await openParent(root, path.split("/").filter((s) => s !== ""), true, owner)
  await dir?.close()
}

/** Writes a file, creating its directories; a directory or a symlink in the way is refused. */
export const write = async (root: string, path: string, bytes: Uint8Array, owner: Owner | undefined) => {
  const { name, parents } = split(path)
  if (name === undefined) throw new PathRefused("a file path must name a file")
  const dir = await openParent(root, parents, true, owner)
  if (dir === undefined) throw new PathRefused("the directory could not be made")
  try {
    const existing = await fs.lstat(fdPath(dir, name)).catch(() => undefined)
    if (existing?.isDirectory()) throw new PathRefused(`${name} is a directory`)
    // Written beside the target and renamed over it, so a reader never sees half a file.
    const temporary = `.sightline-upload-${randomBytes(8).toString("hex")}`
    const file = await fs.open(
      fdPath(dir, temporary),
      fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | O_NOFOLLOW,
      0o644
    )
    try {
      await file.writeFile(bytes)
      if (owner !== undefined) await file.chown(owner.uid, owner.gid)
    } finally {
      await file.close()
    }
    await fs.rename(fdPath(dir, temporary), fdPath(dir, name)).catch(async (error) => {
      await fs.unlink(fdPath(dir, temporary)).catch(() => undefined)
      throw isCode(error, "EISDIR", "ENOTEMPTY") ? new PathRefused(`${name} is a directory`) : error
    })
  } finally {
    await dir.close()
  }
}

/**
 * Deletes a file or a directory with its contents; false when there was nothing. The target is moved
 * into `trash` (outside the sandbox's view) before it is removed, so nothing the sandbox does during
 * the removal can point it elsewhere.
 */
export const remove = async (root: string, path: string, trash: string): Promise<boolean> => {
  const { name, parents } = split(path)
  if (name === undefined) return false
  const dir = await openExisting(root, parents)
  if (dir === undefined) return false
  try {
    await fs.mkdir(trash, { recursive: true, mode: 0o700 })
    const parked = NodePath.join(trash, randomBytes(8).toString("hex"))
    try {
      await fs.rename(fdPath(dir, name), parked)
    } catch (error) {
      if (isCode(error, "ENOENT")) return false
      throw error
    }
    await fs.rm(parked, { recursive: true, force: true })
    return true
  } finally {
    await dir.close()
  }
}

/** Every regular file under `path` (relative to it), dotfiles and symlinks skipped. */
export const walk = async (root: string, path: string): Promise<Map<string, Uint8Array>> => {
  const files = new Map<string, Uint8Array>()
  const visit = async (relative: string) => {
    const entries = await list(root, relative === "" ? path : `${path}/${relative}`)
    for (const entry of entries ?? []) {
      const child = relative === "" ? entry.name : `${relative}/${entry.name}`
      if (entry.isDir) {
        await visit(child)
      } else {
        const bytes = await read(root, `${path}/${child}`)
        if (bytes !== undefined) files.set(child, bytes)
      }
    }
  }
  await visit("")
  return files
}

/** The bytes the workspace holds (regular files, every depth), without following symlinks. */
export const usage = async (root: string): Promise<number> => {
  let total = 0
  const visit = async (dir: string) => {
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => [])
    for (const entry of entries) {
      const full = NodePath.join(dir, entry.name)
      if (entry.isDirectory()) await visit(full)
      else if (entry.isFile()) total += (await fs.lstat(full).catch(() => ({ size: 0 }))).size
    }
  }
  await visit(root)
  return total
}
