/**
 * Unpacks a PGlite template (a gzipped tarball of a cluster, `PgliteClient.dumpTemplate`) into a
 * new data directory, before PGlite opens it as an existing one. PGlite's own `loadDataDir` keeps
 * the whole unpacked tarball in memory for as long as the instance lives (about 100 MB).
 *
 * A crash must not leave a half-written cluster that the next start would open: the tarball is
 * unpacked into `.template-unpacking`, renamed `.template-unpacked` once complete, and its entries
 * then move into place with `PG_VERSION` (what marks a cluster) last. A start that finds
 * `.template-unpacked` finishes those moves; one that finds `.template-unpacking` starts over.
 *
 * @internal
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

const unpacking = ".template-unpacking"
const unpacked = ".template-unpacked"
const marker = "PG_VERSION"

/** Moves what is left in `.template-unpacked` into `dataDir`, `PG_VERSION` last. */
export const finish = (dataDir: string): void => {
  const from = NodePath.join(dataDir, unpacked)
  const names = NodeFs.readdirSync(from).sort((a, b) => Number(a === marker) - Number(b === marker))
  for (const name of names) NodeFs.renameSync(NodePath.join(from, name), NodePath.join(dataDir, name))
  NodeFs.rmSync(from, { recursive: true, force: true })
}

/** Whether an interrupted unpacking is waiting to be finished. */
export const interrupted = (dataDir: string): boolean => NodeFs.existsSync(NodePath.join(dataDir, unpacked))

/** Unpacks `template` into the fresh `dataDir`. */
export const unpack = async (template: string, dataDir: string): Promise<void> => {
  const into = NodePath.join(dataDir, unpacking)
  NodeFs.rmSync(into, { recursive: true, force: true })
  NodeFs.mkdirSync(into, { recursive: true })
  // Imported here: only a fresh data directory needs it. The entries are absolute (`/base/1/…`):
  // tar strips the leading `/`, and refuses `..`.
  const Tar = await import("tar")
  await Tar.x({ file: template, cwd: into })
  NodeFs.renameSync(into, NodePath.join(dataDir, unpacked))
  finish(dataDir)
}
