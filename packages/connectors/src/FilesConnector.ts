/**
 * FILES connectors: core's `ConnectorFiles` port, and the databases the runtime queries them on.
 *
 * - **Loading.** The uploaded files are loaded into one DuckDB database (`FilesDatabase.build`), in
 *   this process's cache directory. The database file is then kept in the asset store, in parts of
 *   `partBytes` under the connector's `storage_prefix` (a new prefix for every load, so a prefix's
 *   bytes never change): the store is what every process of a deployment shares, PostgreSQL's
 *   tables for a deployment on PostgreSQL.
 * - **Querying.** A process that has no copy of a prefix's database fetches its parts from the store
 *   into its cache directory, once, then opens it read-only (`FilesDatabase.open`): every process
 *   answers questions on every FILES connector. Open databases stay open for the next question, as
 *   many as `Options.memoryBytes` holds of their memory limits; past that, the least recently used
 *   idle one closes (a query in progress keeps its database open).
 * - **Memory.** Uploads are read from disk, parts go through memory one at a time, and DuckDB pages
 *   the database from its file: no step holds a whole file.
 *
 * @since 0.1.0
 */
import { AssetStore } from "@sightline/core/AssetStore"
import type { FilesSettings, FileTable } from "@sightline/core/Connector"
import { ConnectorFiles, defaultLimits, type Limits, type Upload } from "@sightline/core/ConnectorFiles"
import { QueryError } from "@sightline/core/ConnectorRuntime"
import { InvalidRequest } from "@sightline/core/Errors"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createHash, randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as NodePath from "node:path"
import * as FilesDatabase from "./FilesDatabase.js"
import * as LeasedPool from "./internal/leasedPool.js"

/**
 * Options of FILES connectors.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Where this process keeps its copies of the databases (created when missing). */
  readonly cacheDirectory: string
  /** The sizes the deployment takes (`ConnectorFiles.defaultLimits` when absent). */
  readonly limits?: Limits | undefined
  /** The size of one stored part (default 8 MiB). */
  readonly partBytes?: number | undefined
  /** DuckDB's settings for queries (each open database's own memory limit among them). */
  readonly database?: FilesDatabase.OpenOptions | undefined
  /**
   * The memory that the open databases of this process may take together (default 2 GiB): as many
   * stay open as their limits fit, and the least recently used idle one closes to make room.
   */
  readonly memoryBytes?: number | undefined
}

/**
 * The open databases of FILES connectors, for the runtime.
 *
 * @since 0.1.0
 * @category services
 */
export class FilesDatabases extends Context.Tag("@sightline/connectors/FilesConnector/FilesDatabases")<
  FilesDatabases,
  {
    /** Runs `f` on the connector's database, which stays open until `f` ends. */
    readonly use: <A, E>(
      settings: FilesSettings,
      f: (database: FilesDatabase.Database) => Effect.Effect<A, E>
    ) => Effect.Effect<A, E | QueryError>
  }
>() {}

const mimeType = "application/vnd.duckdb"
const partKey = (prefix: string, index: number) => `${prefix}part-${String(index).padStart(6, "0")}`

/**
 * Builds both services over the `AssetStore` in context (scoped: the open databases close with it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const store = yield* AssetStore
    const limits = options.limits ?? defaultLimits
    const partBytes = options.partBytes ?? 8 * 1024 * 1024
    yield* Effect.promise(() => fs.mkdir(options.cacheDirectory, { recursive: true }))
    const localPath = (prefix: string) =>
      NodePath.join(options.cacheDirectory, `${createHash("sha256").update(prefix).digest("hex").slice(0, 32)}.duckdb`)

    // Writes the database file's parts to the store, one part in memory at a time.
    const keep = (path: string, prefix: string) =>
      Effect.acquireUseRelease(
        Effect.promise(() => fs.open(path, "r")),
        (file) =>
          Effect.gen(function*() {
            const buffer = Buffer.alloc(partBytes)
            for (let index = 0;; index++) {
              const { bytesRead } = yield* Effect.promise(() => file.read(buffer, 0, partBytes, index * partBytes))
              if (bytesRead === 0) break
              yield* store.put(partKey(prefix, index), {
                bytes: new Uint8Array(buffer.subarray(0, bytesRead)),
                mimeType
              })
              if (bytesRead < partBytes) break
            }
          }),
        (file) => Effect.promise(() => file.close())
      )

    // A new database under a new prefix: the uploads on top of `current`'s database (when given),
    // without the tables of `drop`.
    const change = (
      organizationId: string,
      current: FilesSettings | undefined,
      uploads: ReadonlyArray<Upload>,
      drop: ReadonlyArray<string>
    ) =>
      Effect.gen(function*() {
        const base = current === undefined ? undefined : yield* local(current)
        const prefix = `connector-files/${organizationId}/${randomUUID()}/`
        const target = localPath(prefix)
        const building = `${target}.${randomUUID()}.building`
        const built = yield* FilesDatabase.build(
          uploads.map((upload) => ({ path: upload.path, fileName: upload.fileName })),
          building,
          { base, drop }
        ).pipe(Effect.mapError((error) => new InvalidRequest({ message: error.message })))
        const size = (yield* Effect.promise(() => fs.stat(building))).size
        yield* keep(building, prefix).pipe(
          Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : store.deletePrefix(prefix))
        )
        yield* Effect.promise(() => fs.rename(building, target))
        const sizes = new Map(uploads.map((upload) => [upload.fileName, upload.sizeBytes]))
        const loaded: Array<FileTable> = built.map((table) => ({
          table: table.table,
          file_name: table.fileName,
          ...(table.sheet === undefined ? {} : { sheet: table.sheet }),
          format: table.format,
          size_bytes: sizes.get(table.fileName) ?? 0,
          rows: table.rows,
          columns: table.columns,
          preview: table.preview
        }))
        const replaced = new Set([...drop, ...loaded.map((table) => table.table)])
        return {
          tables: [...(current?.tables ?? []).filter((table) => !replaced.has(table.table)), ...loaded],
          storage_prefix: prefix,
          size_bytes: size
        } satisfies FilesSettings
      }).pipe(
        Effect.withSpan("FilesConnector.change", { attributes: { files: uploads.length, dropped: drop.length } })
      )

    // Fetches a database from the store into the cache directory, whole or not at all.
    const fetch = (settings: FilesSettings, path: string) =>
      Effect.gen(function*() {
        const partial = `${path}.${randomUUID()}.fetching`
        const file = yield* Effect.promise(() => fs.open(partial, "w"))
        let size = 0
        yield* Effect.gen(function*() {
          for (let index = 0;; index++) {
            const part = yield* store.get(partKey(settings.storage_prefix, index))
            if (Option.isNone(part)) break
            yield* Effect.promise(() => file.write(part.value.bytes))
            size += part.value.bytes.length
          }
        }).pipe(Effect.ensuring(Effect.promise(() => file.close())))
        if (size !== settings.size_bytes) {
          yield* Effect.promise(() => fs.rm(partial, { force: true }))
          return yield* new QueryError({
            message: `the connector's files are not all in the store (${size} of ${settings.size_bytes} bytes)`
          })
        }
        yield* Effect.promise(() => fs.rename(partial, path))
      })

    const exists = (path: string) => Effect.promise(() => fs.access(path).then(() => true, () => false))
    // One fetch at a time: two questions on a new connector fetch it once.
    const fetching = yield* Effect.makeSemaphore(1)
    // This process's copy of a prefix's database, fetched from the store when it has none.
    const local = (settings: FilesSettings) =>
      fetching.withPermits(1)(Effect.gen(function*() {
        const path = localPath(settings.storage_prefix)
        if (!(yield* exists(path))) yield* fetch(settings, path)
        return path
      }))
    // The memory budget, in databases of one limit each.
    const budget = options.memoryBytes ?? 2 * 1024 ** 3
    const each = Math.min(options.database?.memoryBytes ?? FilesDatabase.defaultMemoryBytes, budget)
    const open = yield* LeasedPool.make({
      capacity: Math.floor(budget / each),
      // A prefix's files never change: a change of files makes a new prefix.
      identity: (settings: FilesSettings) => settings.storage_prefix,
      open: (settings) =>
        Effect.flatMap(local(settings), (path) => FilesDatabase.open(path, { ...options.database, memoryBytes: each }))
    })

    const databases = FilesDatabases.of({ use: (settings, f) => open.use(settings, f) })

    // The store lost a database's parts: the caller is told, as a request that cannot be done.
    const asRequest = <A>(effect: Effect.Effect<A, InvalidRequest | QueryError>) =>
      Effect.catchTag(effect, "QueryError", (error) => Effect.fail(new InvalidRequest({ message: error.message })))

    const files = ConnectorFiles.of({
      limits,
      load: (organizationId, uploads) => asRequest(change(organizationId, undefined, uploads, [])),
      change: (organizationId, current, uploads, drop) => asRequest(change(organizationId, current, uploads, drop)),
      // The store's parts and this process's copy; another process's copy stays until it restarts
      // (it is never asked for again: a prefix is never reused).
      remove: (settings) =>
        Effect.gen(function*() {
          yield* store.deletePrefix(settings.storage_prefix)
          yield* open.invalidate(settings.storage_prefix)
          yield* Effect.promise(() => fs.rm(localPath(settings.storage_prefix), { force: true }))
        })
    })

    return { files, databases }
  })

/**
 * Both services as a layer over the `AssetStore`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ConnectorFiles | FilesDatabases, never, AssetStore> =>
  Layer.scopedContext(
    Effect.map(
      make(options),
      ({ databases, files }) => Context.make(ConnectorFiles, files).pipe(Context.add(FilesDatabases, databases))
    )
  )
