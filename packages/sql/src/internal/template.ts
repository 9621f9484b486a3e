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
import * as NodeZlib from "node:zlib"

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
  // Inflated in one piece, into a buffer of the size the gzip trailer gives: in zlib's default
  // 16 KB pieces, the tarball's 40 MB stayed in the C heap as freed memory for the life of the
  // process. `tar` is imported here, as only a fresh data directory needs it. Its entries are
  // absolute (`/base/1/…`): it strips the leading `/`, and refuses `..`.
  const gzipped = NodeFs.readFileSync(template)
  const size = gzipped.length >= 4 ? gzipped.readUInt32LE(gzipped.length - 4) : 0
  const tarball = NodeZlib.gunzipSync(gzipped, { chunkSize: Math.max(64 * 1024, size + 1) })
  const Tar = await import("tar")
  // A damaged entry is only a warning to tar: here it fails the unpacking (stripping the leading
  // `/` is information, `TAR_ENTRY_INFO`).
  const problems: Array<string> = []
  new Tar.UnpackSync({
    cwd: into,
    onwarn: (code, message) => {
      if (code !== "TAR_ENTRY_INFO") problems.push(`${code}: ${String(message)}`)
    }
  }).end(tarball)
  if (problems.length > 0) throw new Error(`the template ${template} is damaged (${problems.join("; ")})`)
  NodeFs.renameSync(into, NodePath.join(dataDir, unpacked))
  finish(dataDir)
}
