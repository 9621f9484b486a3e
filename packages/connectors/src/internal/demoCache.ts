/**
 * The DEMO dataset's built database, kept as a gzipped tarball of its PGlite cluster. Building it
 * (initdb, then 2.7 MB of INSERTs) takes about 9 s, most of it on the event loop; loading the tarball
 * about 2 s. A file is named by the dataset and a hash of the statements it was built from, so a
 * changed generator or a new year never loads an old one. It is written under a temporary name and
 * renamed, so processes sharing the directory, or a crash, never leave half a file to load.
 *
 * @internal
 */
import { createHash, randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"

/** Where the cluster built from `statements` is kept in `directory`. */
export const fileOf = (directory: string, dataset: string, statements: ReadonlyArray<string>): string => {
  const hash = createHash("sha256")
  for (const statement of statements) hash.update(statement).update("\0")
  return path.join(directory, `${dataset}-${hash.digest("hex").slice(0, 16)}.tar.gz`)
}

/** The cached tarball at `file`, or undefined when there is none. */
export const read = (file: string): Promise<Blob | undefined> =>
  fs.readFile(file).then((bytes) => new Blob([bytes]), () => undefined)

/** Whether `file` is there. */
export const exists = (file: string): Promise<boolean> => fs.access(file).then(() => true, () => false)

/** Writes `tarball` to `file` whole, and removes the dataset's older files beside it. */
export const write = async (file: string, tarball: Blob): Promise<void> => {
  const directory = path.dirname(file)
  await fs.mkdir(directory, { recursive: true })
  const temporary = `${file}.${randomUUID()}.tmp`
  try {
    await fs.writeFile(temporary, new Uint8Array(await tarball.arrayBuffer()))
    await fs.rename(temporary, file)
  } finally {
    await fs.rm(temporary, { force: true })
  }
  const dataset = path.basename(file).replace(/-[0-9a-f]{16}\.tar\.gz$/, "")
  const stale = (await fs.readdir(directory)).filter((name) =>
    name !== path.basename(file) && /^(.+)-[0-9a-f]{16}\.tar\.gz$/.exec(name)?.[1] === dataset
  )
  await Promise.all(stale.map((name) => fs.rm(path.join(directory, name), { force: true })))
}
