/**
 * The sandbox runtime port: what `@sightline/sandbox` implements with isolated processes.
 *
 * A running sandbox has a persistent Python kernel (`execute`), one-shot commands (`exec`) and a
 * workspace directory (`/sandbox/files` inside the sandbox) that the files operations address with
 * relative paths. The organization's Context Library is mounted at `library/` in the workspace; the
 * runtime remembers the mounted snapshot so that `libraryChanges` can report the edits made since.
 *
 * The runtime knows sandboxes by id only: which member or organization may use a sandbox is decided
 * by the use cases before they call it. Text outputs never hold NUL (stores cannot keep it in text;
 * runtimes show it as U+FFFD). Code that fails (a Python exception, a non-zero exit) is a
 * result, not an error; the error channels carry only `SandboxNotRunning`, `InvalidRequest` for a
 * path the rules below reject, and `Conflict` for starting a running sandbox.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { Conflict, InvalidRequest } from "./Errors.js"
import { type OrganizationId, SandboxId } from "./Ids.js"

/**
 * The workspace directory inside a sandbox; file paths of this port are relative to it.
 *
 * @since 0.1.0
 * @category constants
 */
export const workspaceRoot = "/sandbox/files"

/**
 * The workspace-relative directory where the Context Library is mounted.
 *
 * @since 0.1.0
 * @category constants
 */
export const libraryDir = "library"

/**
 * The sandbox is not running (never started, stopped, or lost with its host).
 *
 * @since 0.1.0
 * @category errors
 */
export class SandboxNotRunning extends Schema.TaggedError<SandboxNotRunning>()("SandboxNotRunning", {
  sandboxId: SandboxId,
  message: Schema.optionalWith(Schema.String, { default: () => "Sandbox is not running" })
}) {}

/**
 * Library files: library-relative path to bytes (the shape of a `LibraryStore` snapshot's files).
 *
 * @since 0.1.0
 * @category models
 */
export type LibraryFiles = HashMap.HashMap<string, Uint8Array>

/**
 * What to start: the sandbox, its organization, and the library files to mount.
 *
 * @since 0.1.0
 * @category models
 */
export interface StartOptions {
  readonly sandboxId: SandboxId
  readonly organizationId: OrganizationId
  readonly libraryFiles: LibraryFiles
}

/**
 * A file an execution produced (a chart, an export).
 *
 * @since 0.1.0
 * @category schemas
 */
export const GeneratedFile = Schema.Struct({
  name: Schema.String,
  mimeType: Schema.String,
  /** The content, when the runtime hands it over (an adapter may leave it in the workspace). */
  bytes: Schema.optional(Schema.Uint8ArrayFromSelf)
})
export type GeneratedFile = typeof GeneratedFile.Type

/**
 * A dataframe an execution left in the kernel.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DataframeInfo = Schema.Struct({
  name: Schema.String,
  numRows: Schema.Int.pipe(Schema.nonNegative()),
  numCols: Schema.Int.pipe(Schema.nonNegative())
})
export type DataframeInfo = typeof DataframeInfo.Type

/**
 * The result of running code in the kernel. A Python exception is reported in `error`, not as a failure.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExecuteResult = Schema.Struct({
  /** The cell's outputs (stdout and displayed values), `null` when it printed nothing. */
  output: Schema.NullOr(Schema.Array(Schema.String)),
  error: Schema.optional(Schema.String),
  executionTimeMs: Schema.Number.pipe(Schema.nonNegative()),
  files: Schema.Array(GeneratedFile),
  dataframes: Schema.Array(DataframeInfo)
})
export type ExecuteResult = typeof ExecuteResult.Type

/**
 * The interpreter of a one-shot command.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExecKind = Schema.Literal("bash", "python")
export type ExecKind = typeof ExecKind.Type

/**
 * A one-shot command.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecOptions {
  readonly command: string
  readonly kind: ExecKind
  readonly env?: Readonly<Record<string, string>> | undefined
}

/**
 * The result of a one-shot command; a non-zero `exitCode` is a result, `error` says why it could not run (e.g. a timeout).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExecResult = Schema.Struct({
  stdout: Schema.String,
  stderr: Schema.String,
  exitCode: Schema.Int,
  error: Schema.optional(Schema.String)
})
export type ExecResult = typeof ExecResult.Type

/**
 * An entry of a workspace directory.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FileEntry = Schema.Struct({
  name: Schema.String,
  sizeBytes: Schema.Int.pipe(Schema.nonNegative()),
  isDir: Schema.Boolean,
  modifiedAt: Schema.DateTimeUtc
})
export type FileEntry = typeof FileEntry.Type

/**
 * How a library file differs from the mounted snapshot.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LibraryChangeStatus = Schema.Literal("added", "modified", "deleted")
export type LibraryChangeStatus = typeof LibraryChangeStatus.Type

/**
 * A library file that differs from the mounted snapshot: its library-relative path and current content.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LibraryChange = Schema.Struct({
  path: Schema.String,
  status: LibraryChangeStatus,
  /** The current bytes; absent for a deleted file. */
  content: Schema.optional(Schema.Uint8ArrayFromSelf)
})
export type LibraryChange = typeof LibraryChange.Type

/**
 * Rows the server fetched, to become a DataFrame in the kernel (`POST /v2/sandcastles/{id}/query`).
 *
 * @since 0.1.0
 * @category models
 */
export interface DataframeRows {
  /** The variable it becomes (a Python identifier). */
  readonly name: string
  readonly columns: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<unknown>>
}

/**
 * What loading rows into the kernel made; `error` says why it could not (a result, not a failure).
 *
 * @since 0.1.0
 * @category schemas
 */
export const LoadResult = Schema.Struct({
  /** A text rendering of the first rows. */
  preview: Schema.String,
  numRows: Schema.Int.pipe(Schema.nonNegative()),
  numCols: Schema.Int.pipe(Schema.nonNegative()),
  error: Schema.optional(Schema.String)
})
export type LoadResult = typeof LoadResult.Type

/**
 * What the runtime knows of a sandbox.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SandboxStatus = Schema.Struct({
  status: Schema.Literal("running", "stopped"),
  memoryUsageBytes: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  dataframes: Schema.Array(Schema.Struct({
    ...DataframeInfo.fields,
    memoryUsageBytes: Schema.Int.pipe(Schema.nonNegative())
  }))
})
export type SandboxStatus = typeof SandboxStatus.Type

/**
 * Runs sandboxes.
 *
 * @since 0.1.0
 * @category services
 */
export class SandboxRuntime extends Context.Tag("@sightline/core/SandboxRuntime")<
  SandboxRuntime,
  SandboxRuntime.Service
>() {}

export declare namespace SandboxRuntime {
  /** Sandbox processes, their kernels and workspaces. */
  export interface Service {
    /** Whether sandboxes can start here at all (false where the runtime is missing: the agent then offers no Python). */
    readonly available: boolean
    /** Starts a sandbox with a fresh kernel and workspace and mounts the library. `Conflict` if it is running. */
    readonly start: (options: StartOptions) => Effect.Effect<void, Conflict>
    /** Runs Python in the sandbox's persistent kernel (state survives between calls). */
    readonly execute: (sandboxId: SandboxId, code: string) => Effect.Effect<ExecuteResult, SandboxNotRunning>
    /** Hands rows to the kernel as a pandas DataFrame named `rows.name` (replacing one of that name). */
    readonly loadDataframe: (sandboxId: SandboxId, rows: DataframeRows) => Effect.Effect<LoadResult, SandboxNotRunning>
    /** Runs a one-shot command in the workspace. */
    readonly exec: (sandboxId: SandboxId, options: ExecOptions) => Effect.Effect<ExecResult, SandboxNotRunning>
    /** The entries of a workspace directory (the root when `path` is omitted), dotfiles hidden; none if it is no directory. */
    readonly listFiles: (
      sandboxId: SandboxId,
      path?: string
    ) => Effect.Effect<Option.Option<ReadonlyArray<FileEntry>>, SandboxNotRunning | InvalidRequest>
    /** The bytes of a workspace file; none if there is no such file. */
    readonly readFile: (
      sandboxId: SandboxId,
      path: string
    ) => Effect.Effect<Option.Option<Uint8Array>, SandboxNotRunning | InvalidRequest>
    /** Writes a workspace file, creating its directories. `InvalidRequest` when a directory is in the way. */
    readonly writeFile: (
      sandboxId: SandboxId,
      path: string,
      bytes: Uint8Array
    ) => Effect.Effect<void, SandboxNotRunning | InvalidRequest>
    /** Deletes a workspace file or directory (with its contents); false if there was nothing to delete. */
    readonly deleteFile: (
      sandboxId: SandboxId,
      path: string
    ) => Effect.Effect<boolean, SandboxNotRunning | InvalidRequest>
    /** The library files that differ from the mounted snapshot, by path; dotfiles are ignored. */
    readonly libraryChanges: (sandboxId: SandboxId) => Effect.Effect<ReadonlyArray<LibraryChange>, SandboxNotRunning>
    /** Replaces `library/` with these files and makes them the new snapshot (after a change is filed or rebased). */
    readonly mountLibrary: (
      sandboxId: SandboxId,
      libraryFiles: LibraryFiles
    ) => Effect.Effect<void, SandboxNotRunning>
    /** Stops the sandbox and discards its kernel and workspace; stopping a stopped sandbox does nothing. */
    readonly stop: (sandboxId: SandboxId) => Effect.Effect<void>
    /** Whether the sandbox runs, and its kernel's memory and dataframes when it does. */
    readonly status: (sandboxId: SandboxId) => Effect.Effect<SandboxStatus>
  }
}

const invalidPath = (path: string, why: string) =>
  new InvalidRequest({ message: `invalid path ${JSON.stringify(path)}: ${why}` })

/**
 * Checks a workspace path from a client and returns it normalized (no trailing slash). A path must be
 * relative and may not contain empty, `.`, `..` or dot-prefixed segments, backslashes or NUL: the
 * files API never reaches outside the workspace and never serves dotfiles.
 *
 * @since 0.1.0
 * @category utils
 */
export const validatePath = (path: string): Either.Either<string, InvalidRequest> => {
  if (path.includes("\0") || path.includes("\\")) return Either.left(invalidPath(path, "forbidden character"))
  if (path.startsWith("/")) return Either.left(invalidPath(path, "must be relative to the workspace"))
  const trimmed = path.endsWith("/") ? path.slice(0, -1) : path
  const segments = trimmed.split("/")
  if (segments.some((segment) => segment === "")) return Either.left(invalidPath(path, "empty segment"))
  if (segments.some((segment) => segment.startsWith("."))) {
    return Either.left(invalidPath(path, "dot segments and dotfiles are not accessible"))
  }
  return Either.right(trimmed)
}

/**
 * Text as stores can keep it: NUL (which code prints as it likes, and PostgreSQL text refuses) shown
 * as U+FFFD. Runtimes pass every output through it.
 *
 * @since 0.1.0
 * @category utils
 */
export const storableText = (text: string): string =>
  text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text

const mimeTypes: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  svg: "image/svg+xml",
  pdf: "application/pdf",
  csv: "text/csv",
  json: "application/json",
  txt: "text/plain; charset=utf-8",
  md: "text/markdown; charset=utf-8",
  html: "text/html; charset=utf-8",
  sql: "application/sql",
  py: "text/x-python; charset=utf-8",
  parquet: "application/vnd.apache.parquet",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
}

/**
 * The MIME type of a workspace file, by its extension (`application/octet-stream` when unknown).
 *
 * @since 0.1.0
 * @category utils
 */
export const mimeTypeOf = (name: string): string =>
  mimeTypes[name.slice(name.lastIndexOf(".") + 1).toLowerCase()] ?? "application/octet-stream"

/**
 * Whether any segment of a relative path is a dotfile (hidden from listings and library changes).
 *
 * @since 0.1.0
 * @category guards
 */
export const isHidden = (path: string): boolean => path.split("/").some((segment) => segment.startsWith("."))

/**
 * Whether two byte arrays hold the same bytes.
 *
 * @since 0.1.0
 * @category utils
 */
export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((byte, i) => byte === b[i])

/**
 * The changes between a mounted library snapshot and the current library files (both library-relative),
 * sorted by path, dotfiles ignored. Runtimes that can hold both in memory use it as is.
 *
 * @since 0.1.0
 * @category utils
 */
export const diffLibrary = (snapshot: LibraryFiles, current: LibraryFiles): ReadonlyArray<LibraryChange> => {
  const changes: Array<LibraryChange> = []
  for (const [path, content] of current) {
    if (isHidden(path)) continue
    Option.match(HashMap.get(snapshot, path), {
      onNone: () => changes.push({ path, status: "added", content }),
      onSome: (before) => sameBytes(before, content) ? undefined : changes.push({ path, status: "modified", content })
    })
  }
  for (const path of HashMap.keys(snapshot)) {
    if (!isHidden(path) && !HashMap.has(current, path)) changes.push({ path, status: "deleted" })
  }
  return Arr.sort(changes, Order.mapInput(Order.string, (change: LibraryChange) => change.path))
}

/**
 * Library changes as edits to the mounted snapshot (path to new bytes, none for a deletion), as a library commit takes them.
 *
 * @since 0.1.0
 * @category utils
 */
export const toEdits = (changes: ReadonlyArray<LibraryChange>): HashMap.HashMap<string, Option.Option<Uint8Array>> =>
  HashMap.fromIterable(Arr.map(changes, (change) => [change.path, Option.fromNullable(change.content)] as const))

// ---------------------------------------------------------------------------------------------------------------------
// Memory fake
// ---------------------------------------------------------------------------------------------------------------------

/**
 * Code the memory fake was asked to run: `kernel` for `execute`, else the `exec` kind.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordedRun {
  readonly sandboxId: SandboxId
  readonly kind: "kernel" | ExecKind
  readonly code: string
}

/**
 * What the memory fake recorded, for assertions in tests.
 *
 * @since 0.1.0
 * @category services
 */
export class MemorySandboxRuntime extends Context.Tag("@sightline/core/SandboxRuntime/MemorySandboxRuntime")<
  MemorySandboxRuntime,
  MemorySandboxRuntime.Service
>() {}

export declare namespace MemorySandboxRuntime {
  /** The recorded code. */
  export interface Service {
    /** Every `execute` and `exec`, oldest first. */
    readonly runs: Effect.Effect<ReadonlyArray<RecordedRun>>
  }
}

/**
 * Scripted answers of the memory fake.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions {
  /** The result of `execute`; by default no output, no files, no dataframes. */
  readonly execute?: (code: string, sandboxId: SandboxId) => ExecuteResult
  /** The result of `exec`; by default empty output and exit code 0. */
  readonly exec?: (options: ExecOptions, sandboxId: SandboxId) => ExecResult
}

interface StoredFile {
  readonly bytes: Uint8Array
  readonly modifiedAt: DateTime.Utc
}

interface MemorySandbox {
  readonly files: HashMap.HashMap<string, StoredFile>
  readonly snapshot: LibraryFiles
  readonly dataframes: HashMap.HashMap<string, DataframeInfo>
}

const libraryPrefix = `${libraryDir}/`

const isUnder = (dir: string) => (path: string) => dir === "" || path.startsWith(`${dir}/`)

// Library paths come from the library store, not from clients: dotfiles are allowed, escaping is a defect.
const checkLibraryPaths = (files: LibraryFiles) =>
  Effect.forEach(
    HashMap.keys(files),
    (path) =>
      path.startsWith("/") || path.split("/").some((s) => s === "" || s === "." || s === "..")
        ? Effect.dieMessage(`SandboxRuntime: invalid library path ${JSON.stringify(path)}`)
        : Effect.void,
    { discard: true }
  )

const mountedFiles = (
  files: HashMap.HashMap<string, StoredFile>,
  library: LibraryFiles,
  now: DateTime.Utc
) =>
  HashMap.reduce(
    library,
    HashMap.filter(files, (_, path) => !isUnder(libraryDir)(path)),
    (acc, bytes, path) => HashMap.set(acc, `${libraryPrefix}${path}`, { bytes, modifiedAt: now })
  )

/**
 * An in-memory fake for unit tests of use cases. It cannot run Python or commands: `execute` and
 * `exec` record the code and answer from `options` (by default: nothing). Files, the library mount,
 * library changes and the lifecycle behave like a real runtime's.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemoryWith = (options: MemoryOptions = {}): Layer.Layer<SandboxRuntime | MemorySandboxRuntime> =>
  Layer.effectContext(Effect.gen(function*() {
    const sandboxes = yield* Ref.make(HashMap.empty<SandboxId, MemorySandbox>())
    const runs = yield* Ref.make<ReadonlyArray<RecordedRun>>([])

    const running = (sandboxId: SandboxId) =>
      Effect.flatMap(Ref.get(sandboxes), (all) =>
        Option.match(HashMap.get(all, sandboxId), {
          onNone: () => Effect.fail(new SandboxNotRunning({ sandboxId })),
          onSome: Effect.succeed
        }))

    const update = (sandboxId: SandboxId, f: (sandbox: MemorySandbox) => MemorySandbox) =>
      Ref.update(sandboxes, HashMap.modify(sandboxId, f))

    // Either is an Effect in Effect 3: a rejected path fails the operation with its InvalidRequest.
    const checked = (path: string): Effect.Effect<string, InvalidRequest> => validatePath(path)

    const record = (run: RecordedRun) => Ref.update(runs, Arr.append(run))

    // One operation at a time, so that a check and the update it guards see the same state.
    const lock = yield* Effect.makeSemaphore(1)
    const locked = lock.withPermits(1)

    const runtime: SandboxRuntime.Service = {
      available: true,
      start: ({ libraryFiles, sandboxId }) =>
        locked(Effect.gen(function*() {
          yield* checkLibraryPaths(libraryFiles)
          if (HashMap.has(yield* Ref.get(sandboxes), sandboxId)) {
            return yield* new Conflict({ message: `sandbox ${sandboxId} is already running` })
          }
          const now = yield* DateTime.now
          const sandbox: MemorySandbox = {
            files: mountedFiles(HashMap.empty(), libraryFiles, now),
            snapshot: libraryFiles,
            dataframes: HashMap.empty()
          }
          yield* Ref.update(sandboxes, HashMap.set(sandboxId, sandbox))
        })),

      execute: (sandboxId, code) =>
        locked(Effect.gen(function*() {
          yield* running(sandboxId)
          yield* record({ sandboxId, kind: "kernel", code })
          const result = options.execute?.(code, sandboxId) ??
            { output: null, executionTimeMs: 0, files: [], dataframes: [] }
          yield* update(sandboxId, (sandbox) => ({
            ...sandbox,
            dataframes: Arr.reduce(result.dataframes, sandbox.dataframes, (acc, df) => HashMap.set(acc, df.name, df))
          }))
          return result
        })),

      loadDataframe: (sandboxId, rows) =>
        locked(Effect.gen(function*() {
          yield* running(sandboxId)
          const info: DataframeInfo = { name: rows.name, numRows: rows.rows.length, numCols: rows.columns.length }
          yield* update(
            sandboxId,
            (sandbox) => ({ ...sandbox, dataframes: HashMap.set(sandbox.dataframes, rows.name, info) })
          )
          const preview = [rows.columns, ...rows.rows.slice(0, 20)].map((row) => row.map(String).join("  ")).join("\n")
          return { preview, numRows: info.numRows, numCols: info.numCols }
        })),

      exec: (sandboxId, execOptions) =>
        locked(Effect.gen(function*() {
          yield* running(sandboxId)
          yield* record({ sandboxId, kind: execOptions.kind, code: execOptions.command })
          return options.exec?.(execOptions, sandboxId) ?? { stdout: "", stderr: "", exitCode: 0 }
        })),

      listFiles: (sandboxId, path) =>
        locked(Effect.gen(function*() {
          const dir = path === undefined || path === "" ? "" : yield* checked(path)
          const { files } = yield* running(sandboxId)
          const inside = Arr.filter(Arr.fromIterable(files), ([file]) => isUnder(dir)(file))
          if (dir !== "" && (inside.length === 0 || HashMap.has(files, dir))) return Option.none()
          const children = Arr.groupBy(inside, ([file]) => file.slice(dir === "" ? 0 : dir.length + 1).split("/")[0]!)
          const entries = Object.entries(children)
            .filter(([name]) => !name.startsWith("."))
            .map(([name, group]): FileEntry => {
              const isDir = group.some(([file]) => file !== (dir === "" ? name : `${dir}/${name}`))
              return {
                name,
                isDir,
                sizeBytes: isDir ? 0 : group[0][1].bytes.length,
                modifiedAt: Arr.reduce(
                  group,
                  group[0][1].modifiedAt,
                  (latest, [, file]) => DateTime.max(latest, file.modifiedAt)
                )
              }
            })
          return Option.some(Arr.sort(entries, Order.mapInput(Order.string, (entry: FileEntry) => entry.name)))
        })),

      readFile: (sandboxId, path) =>
        locked(Effect.gen(function*() {
          const file = yield* checked(path)
          const { files } = yield* running(sandboxId)
          return Option.map(HashMap.get(files, file), (stored) => stored.bytes)
        })),

      writeFile: (sandboxId, path, bytes) =>
        locked(Effect.gen(function*() {
          const file = yield* checked(path)
          const { files } = yield* running(sandboxId)
          const segments = file.split("/")
          const parentIsFile = segments.slice(1).some((_, i) => HashMap.has(files, segments.slice(0, i + 1).join("/")))
          if (parentIsFile || Arr.some(Arr.fromIterable(HashMap.keys(files)), isUnder(file))) {
            return yield* invalidPath(path, "a directory or file is in the way")
          }
          const now = yield* DateTime.now
          yield* update(sandboxId, (sandbox) => ({
            ...sandbox,
            files: HashMap.set(sandbox.files, file, { bytes: Uint8Array.from(bytes), modifiedAt: now })
          }))
        })),

      deleteFile: (sandboxId, path) =>
        locked(Effect.gen(function*() {
          const target = yield* checked(path)
          const { files } = yield* running(sandboxId)
          const doomed = (file: string) => file === target || isUnder(target)(file)
          if (!Arr.some(Arr.fromIterable(HashMap.keys(files)), doomed)) return false
          yield* update(sandboxId, (sandbox) => ({
            ...sandbox,
            files: HashMap.filter(sandbox.files, (_, file) => !doomed(file))
          }))
          return true
        })),

      libraryChanges: (sandboxId) =>
        locked(Effect.map(running(sandboxId), ({ files, snapshot }) =>
          diffLibrary(
            snapshot,
            HashMap.reduce(files, HashMap.empty<string, Uint8Array>(), (library, file, path) =>
              path.startsWith(libraryPrefix)
                ? HashMap.set(library, path.slice(libraryPrefix.length), file.bytes)
                : library)
          ))),

      mountLibrary: (sandboxId, libraryFiles) =>
        locked(Effect.gen(function*() {
          yield* checkLibraryPaths(libraryFiles)
          yield* running(sandboxId)
          const now = yield* DateTime.now
          yield* update(sandboxId, (sandbox) => ({
            ...sandbox,
            files: mountedFiles(sandbox.files, libraryFiles, now),
            snapshot: libraryFiles
          }))
        })),

      stop: (sandboxId) => locked(Ref.update(sandboxes, HashMap.remove(sandboxId))),

      status: (sandboxId) =>
        locked(Effect.map(Ref.get(sandboxes), (all) =>
          Option.match(HashMap.get(all, sandboxId), {
            onNone: (): SandboxStatus => ({ status: "stopped", dataframes: [] }),
            onSome: (sandbox): SandboxStatus => ({
              status: "running",
              dataframes: Arr.map(Arr.fromIterable(HashMap.values(sandbox.dataframes)), (df) => ({
                ...df,
                memoryUsageBytes: 0
              }))
            })
          })))
    }

    return Context.make(SandboxRuntime, runtime).pipe(
      Context.add(MemorySandboxRuntime, MemorySandboxRuntime.of({ runs: Ref.get(runs) }))
    )
  }))

/**
 * The memory fake with its default answers (see `layerMemoryWith`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<SandboxRuntime | MemorySandboxRuntime> = layerMemoryWith()

/**
 * What a deployment without a sandbox runtime answers (the runtime needs bubblewrap and its adapter).
 *
 * @since 0.1.0
 * @category constants
 */
export const unconfiguredMessage = "no sandbox runtime is configured on this server"

/**
 * The runtime of a deployment that cannot run sandboxes, saying why (`reason`, for example what to
 * install): nothing starts (`Conflict` with the reason), nothing runs, and every sandbox reads as
 * stopped. Unlike `layerMemory`, it never pretends to run code.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerUnavailable = (reason: string): Layer.Layer<SandboxRuntime> => {
  const notRunning = (sandboxId: SandboxId) => Effect.fail(new SandboxNotRunning({ sandboxId, message: reason }))
  return Layer.succeed(
    SandboxRuntime,
    SandboxRuntime.of({
      available: false,
      start: () => Effect.fail(new Conflict({ message: reason })),
      execute: notRunning,
      loadDataframe: notRunning,
      exec: notRunning,
      listFiles: notRunning,
      readFile: notRunning,
      writeFile: notRunning,
      deleteFile: notRunning,
      libraryChanges: notRunning,
      mountLibrary: notRunning,
      stop: () => Effect.void,
      status: () => Effect.succeed({ status: "stopped", dataframes: [] })
    })
  )
}

/**
 * The runtime of a deployment that has none (see `layerUnavailable`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerUnconfigured: Layer.Layer<SandboxRuntime> = layerUnavailable(unconfiguredMessage)
