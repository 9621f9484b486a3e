/**
 * Core's `SandboxRuntime` on this host: each sandbox is a bubblewrap-isolated process tree with its
 * own namespaces (no network), a read-only system, its own `/tmp` and one writable workspace at
 * `/sandbox/files`, kept in a directory of the server's choosing (`Options.directory`). A persistent
 * Python kernel answers `execute`; `exec` runs one-shot bash or Python. Resource limits (memory, CPU
 * time, processes, file size) apply to every process, a wall-clock timeout to every execution, and
 * a quota to the workspace. When the server runs as root, each sandbox also runs as its own user, and
 * its workspace is a filesystem of its own sized to the quota, which no run can write past.
 *
 * Nothing ever runs unisolated: where bubblewrap is missing or cannot make namespaces, `layer` fails
 * with `SandboxUnavailable` saying what to install, and a host wires
 * `SandboxRuntime.layerUnavailable(reason)` instead (`layerOrUnavailable` does both).
 *
 * Sandboxes live in the process that started them; they are discarded (and their workspaces removed)
 * when they stop, when the layer's scope closes, and, for a process that died, when the next runtime
 * over the same directory starts.
 *
 * @since 0.1.0
 */
import { Conflict, InvalidRequest } from "@sightline/core/Errors"
import type { SandboxId } from "@sightline/core/Ids"
import * as Metrics from "@sightline/core/Metrics"
import {
  type DataframeInfo,
  type DataframeRows,
  diffLibrary,
  type ExecOptions,
  type ExecResult,
  type ExecuteResult,
  layerUnavailable,
  type LibraryFiles,
  type LoadResult,
  mimeTypeOf,
  SandboxNotRunning,
  SandboxRuntime,
  type SandboxStatus,
  storableText,
  validatePath
} from "@sightline/core/SandboxRuntime"
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { ChildProcess } from "node:child_process"
import { randomBytes, randomInt } from "node:crypto"
import * as fs from "node:fs/promises"
import * as NodePath from "node:path"
import * as Isolation from "./internal/isolation.js"
import { kernelSource } from "./internal/kernel.js"
import { Kernel, type Outcome, runOnce } from "./internal/processes.js"
import * as Volume from "./internal/volume.js"
import * as Workspace from "./internal/workspace.js"

/**
 * Limits of every sandbox.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  /** Address space of each process (RLIMIT_AS), bytes. Default 2 GiB. */
  readonly memoryBytes: number
  /** CPU seconds of one `exec` (RLIMIT_CPU). Default 60. */
  readonly execCpuSeconds: number
  /** CPU seconds over the kernel's whole life (RLIMIT_CPU; it is restarted when spent). Default 3,600. */
  readonly kernelCpuSeconds: number
  /** Processes of the sandbox's user (RLIMIT_NPROC; enforced per sandbox when the server runs as root). Default 64. */
  readonly processes: number
  /** The largest file a process may write (RLIMIT_FSIZE), bytes. Default 256 MiB. */
  readonly fileSizeBytes: number
  /** The size of the sandbox's `/tmp` (memory of the host's, which RLIMIT_AS does not count). Default 64 MiB. */
  readonly tmpBytes: number
  /**
   * The most the workspace may hold, bytes. Default 1 GiB. A full workspace runs nothing until files
   * go; as root, the workspace's own filesystem also stops a run at it (plus 1/16 of bookkeeping).
   */
  readonly workspaceBytes: number
  /** Wall-clock limit of one `execute` or `exec`, milliseconds. Default 120,000. */
  readonly executionTimeoutMillis: number
  /** The most of each of stdout and stderr an `exec` returns, bytes. Default 1 MiB. */
  readonly outputBytes: number
}

/**
 * The defaults of `Limits` (documented in `docs/sandcastles.md`).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultLimits: Limits = {
  memoryBytes: 2 * 1024 ** 3,
  execCpuSeconds: 60,
  kernelCpuSeconds: 3_600,
  processes: 64,
  fileSizeBytes: 256 * 1024 ** 2,
  tmpBytes: 64 * 1024 ** 2,
  workspaceBytes: 1024 ** 3,
  executionTimeoutMillis: 120_000,
  outputBytes: 1024 ** 2
}

/**
 * How to run sandboxes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The directory that holds the workspaces (the server's data directory, for instance). */
  readonly directory: string
  /** The interpreter inside the sandbox; `/usr/bin/python3` (where Debian's pandas and matplotlib are). */
  readonly python?: string | undefined
  readonly limits?: Partial<Limits> | undefined
}

/**
 * Sandboxes cannot run on this host; `reason` says why and what to install.
 *
 * @since 0.1.0
 * @category errors
 */
export class SandboxUnavailable extends Data.TaggedError("SandboxUnavailable")<{ readonly reason: string }> {}

/**
 * Whether sandboxes can run here: the reason when they cannot.
 *
 * @since 0.1.0
 * @category utils
 */
export const availability = (python = "/usr/bin/python3"): Option.Option<string> => {
  const found = Isolation.detect(python)
  return "reason" in found ? Option.some(found.reason) : Option.none()
}

interface Live {
  readonly id: SandboxId
  readonly home: string
  readonly workspace: string
  readonly trash: string
  readonly owner: Workspace.Owner | undefined
  snapshot: LibraryFiles
  kernel: Kernel | undefined
  readonly lock: Effect.Semaphore
  readonly children: Set<ChildProcess>
}

// Rows sent to the kernel per message.
const loadBatchRows = 5_000

const seconds = (millis: number) => `${Math.round(millis / 100) / 10} s`

const exitReason = (outcome: Extract<Outcome, { _tag: "Exited" }>) => {
  const last = outcome.stderr.trim().split("\n").slice(-1)[0]
  return outcome.signal === "SIGKILL"
    ? "it was killed (out of memory or a resource limit)"
    : outcome.signal === "SIGXCPU"
    ? "it used up its CPU time"
    : outcome.signal !== null
    ? `it died of ${outcome.signal}`
    : `it exited with code ${outcome.code}${last ? `: ${last}` : ""}`
}

const INSTANCE_FILE = "server.pid"

/** Unmounts what is mounted under `dir` (a workspace's filesystem), then removes it. */
const removeTree = async (dir: string) => {
  for (const point of await Volume.mountsUnder(dir)) await Volume.unmount(point)
  await fs.rm(dir, { recursive: true, force: true })
}

/** Removes the workspaces of runtimes whose process is gone (a crash left them behind). */
const sweepDeadInstances = async (directory: string) => {
  const entries = await fs.readdir(directory, { withFileTypes: true }).catch(() => [])
  for (const entry of entries) {
    if (!entry.isDirectory()) continue
    const dir = NodePath.join(directory, entry.name)
    const pid = Number(await fs.readFile(NodePath.join(dir, INSTANCE_FILE), "utf8").catch(() => "NaN"))
    if (!Number.isInteger(pid)) continue
    let alive = true
    try {
      process.kill(pid, 0)
    } catch (error) {
      alive = (error as { code?: string }).code === "EPERM"
    }
    if (!alive) await removeTree(dir)
  }
}

/**
 * Builds the runtime; its scope's end stops every sandbox it started.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<SandboxRuntime.Service, SandboxUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const python = options.python ?? "/usr/bin/python3"
    const limits: Limits = { ...defaultLimits, ...options.limits }
    const found = Isolation.detect(python)
    if ("reason" in found) return yield* new SandboxUnavailable({ reason: found.reason })
    const host = found.host
    const root = typeof process.getuid === "function" && process.getuid() === 0

    // One directory per runtime instance, so that several server processes can share a data directory.
    const directory = NodePath.resolve(options.directory)
    const instance = NodePath.join(directory, `${process.pid}-${randomBytes(4).toString("hex")}`)
    yield* Effect.promise(async () => {
      await fs.mkdir(directory, { recursive: true, mode: 0o711 })
      await sweepDeadInstances(directory)
      await fs.mkdir(NodePath.join(instance, "driver"), { recursive: true, mode: 0o755 })
      await fs.chmod(instance, 0o711)
      await fs.writeFile(NodePath.join(instance, INSTANCE_FILE), String(process.pid))
      await fs.writeFile(NodePath.join(instance, "driver", "kernel.py"), kernelSource, { mode: 0o644 })
    })
    const driverDir = NodePath.join(instance, "driver")
    // Whether each workspace gets a filesystem of its own (as root, where loop devices work), or why
    // not: found out once, at the first sandbox's start rather than at the server's.
    const volumeless = yield* Effect.cached(
      Effect.promise(() => Volume.probe(instance)).pipe(
        Effect.tap((reason) =>
          reason !== undefined && root
            ? Effect.logWarning(`sandbox workspaces: the quota is checked between runs only, as ${reason}`)
            : Effect.void
        )
      )
    )

    const live = new Map<SandboxId, Live>()
    // The running-sandboxes gauge of this process, set whenever the set of live sandboxes changes.
    const countLive = Effect.suspend(() => Metric.set(Metrics.sandboxesRunning, live.size))
    const usedUids = new Set<number>()
    // Starts and stops one at a time, so a check and the change it guards see the same map.
    const registry = yield* Effect.makeSemaphore(1)

    const allocateOwner = (): Workspace.Owner | undefined => {
      if (!root) return undefined
      let uid = 0
      do uid = 200_000 + randomInt(800_000)
      while (usedUids.has(uid))
      usedUids.add(uid)
      return { uid, gid: uid }
    }

    const commandFor = (
      sandbox: Live,
      cpuSeconds: number,
      env: Readonly<Record<string, string>>,
      argv: ReadonlyArray<string>,
      fileSizeBytes: number = limits.fileSizeBytes
    ) =>
      Isolation.command(
        host,
        { workspace: sandbox.workspace, driverDir, owner: sandbox.owner },
        {
          memoryBytes: limits.memoryBytes,
          cpuSeconds,
          processes: limits.processes,
          fileSizeBytes,
          tmpBytes: limits.tmpBytes
        },
        env,
        argv
      )

    const startKernel = (sandbox: Live) =>
      Effect.tryPromise({
        try: () => {
          const { args, file } = commandFor(sandbox, limits.kernelCpuSeconds, {}, [
            python,
            "-u",
            "/opt/sightline/kernel.py"
          ])
          return Kernel.start(file, args, 30_000)
        },
        catch: (error) => new Conflict({ message: `the sandbox could not start: ${(error as Error).message}` })
      })

    const running = (sandboxId: SandboxId) =>
      Effect.suspend(() => {
        const sandbox = live.get(sandboxId)
        return sandbox === undefined ? Effect.fail(new SandboxNotRunning({ sandboxId })) : Effect.succeed(sandbox)
      })

    const checked = (path: string): Effect.Effect<string, InvalidRequest> => validatePath(path)

    // The workspace code is the sandbox's own; a path it turned into a symlink is refused, not followed.
    const files = <A>(f: () => Promise<A>) =>
      Effect.tryPromise({ try: f, catch: (error) => error }).pipe(
        Effect.catchAll((error) =>
          error instanceof Workspace.PathRefused
            ? Effect.fail(new InvalidRequest({ message: `invalid path: ${error.message}` }))
            : Effect.die(error)
        )
      )

    // `library/` exists even when nothing is mounted, so code and people find where edits go.
    const writeLibrary = (sandbox: Live, library: LibraryFiles) =>
      Effect.promise(async () => {
        await Workspace.makeDirectory(sandbox.workspace, "library", sandbox.owner)
        for (const [path, bytes] of library) {
          await Workspace.write(sandbox.workspace, `library/${path}`, bytes, sandbox.owner)
        }
      })

    const discard = (sandbox: Live) =>
      Effect.promise(async () => {
        sandbox.kernel?.kill()
        for (const child of sandbox.children) child.kill("SIGKILL")
        if (sandbox.owner !== undefined) usedUids.delete(sandbox.owner.uid)
        await removeTree(sandbox.home)
      })

    /** Runs a kernel request, restarting the kernel when it died or ran out of time (its state is then lost). */
    const onKernel = (
      sandbox: Live,
      payload: unknown
    ): Effect.Effect<
      { readonly _tag: "Answer"; readonly value: Record<string, unknown> } | {
        readonly _tag: "Lost"
        readonly error: string
      }
    > =>
      Effect.gen(function*() {
        if (sandbox.kernel === undefined || sandbox.kernel.exit !== undefined) {
          const started = yield* Effect.either(startKernel(sandbox))
          if (started._tag === "Left") return { _tag: "Lost", error: started.left.message } as const
          sandbox.kernel = started.right
        }
        const kernel = sandbox.kernel
        const outcome = yield* Effect.async<Outcome>((resume) => {
          kernel.request(payload, limits.executionTimeoutMillis).then((o) => resume(Effect.succeed(o)))
          // An interrupted request leaves the kernel busy with it: the kernel goes, the next one is fresh.
          return Effect.sync(() => kernel.kill())
        })
        if (outcome._tag === "Answer") return outcome
        kernel.kill()
        sandbox.kernel = undefined
        const why = outcome._tag === "TimedOut"
          ? `execution timed out after ${seconds(limits.executionTimeoutMillis)}`
          : outcome._tag === "Overflowed"
          ? `the code wrote more than ${Math.floor(outcome.limit / 1024 ** 2)} MiB to the kernel's answer channel`
          : `the Python kernel stopped: ${exitReason(outcome)}`
        // Restarted at once, so the sandbox is ready for the next cell.
        const restarted = yield* Effect.either(startKernel(sandbox))
        if (restarted._tag === "Right") sandbox.kernel = restarted.right
        return { _tag: "Lost", error: `${why}; the kernel was restarted and its variables are lost` } as const
      })

    const quotaMessage = (used: number) =>
      `the workspace holds ${Math.ceil(used / 1024 ** 2)} MiB, over its limit of ${
        Math.floor(limits.workspaceBytes / 1024 ** 2)
      } MiB: delete files`

    const overQuota = (sandbox: Live) =>
      Effect.promise(async () => {
        const used = await Workspace.usage(sandbox.workspace)
        return used > limits.workspaceBytes ? quotaMessage(used) : undefined
      })

    // A workspace at or over its quota runs nothing until files are deleted; below it, a command may
    // write no file larger than what remains (RLIMIT_FSIZE), so one run cannot overshoot by much.
    const room = (sandbox: Live) =>
      Effect.promise(async () => {
        const used = await Workspace.usage(sandbox.workspace)
        return { used, left: limits.workspaceBytes - used }
      })

    const runtime: SandboxRuntime.Service = {
      available: true,
      start: ({ libraryFiles, sandboxId }) =>
        registry.withPermits(1)(Effect.gen(function*() {
          if (live.has(sandboxId)) return yield* new Conflict({ message: `sandbox ${sandboxId} is already running` })
          const home = NodePath.join(instance, sandboxId)
          // The workspace and its trash share a directory, which is the workspace's own filesystem when
          // there is one (a deletion moves into the trash, within one filesystem).
          const volume = NodePath.join(home, "volume")
          const owner = allocateOwner()
          const sandbox: Live = {
            id: sandboxId,
            home,
            workspace: NodePath.join(volume, "files"),
            trash: NodePath.join(volume, "trash"),
            owner,
            snapshot: libraryFiles,
            kernel: undefined,
            lock: yield* Effect.makeSemaphore(1),
            children: new Set()
          }
          const unmountable = yield* volumeless
          yield* Effect.tryPromise({
            try: async () => {
              await fs.mkdir(volume, { recursive: true, mode: 0o700 })
              await fs.chmod(home, 0o700)
              if (unmountable === undefined) {
                await Volume.mount(NodePath.join(home, "volume.img"), volume, limits.workspaceBytes)
              }
              await fs.mkdir(sandbox.workspace, { mode: 0o700 })
              if (owner !== undefined) await fs.chown(sandbox.workspace, owner.uid, owner.gid)
            },
            catch: (error) => error
          }).pipe(
            // The host's own words (devices, paths) are for the operator's log, not the tenant.
            Effect.tapError((error) => Effect.logError("a sandbox's workspace could not be made", error)),
            Effect.tapError(() => discard(sandbox)),
            Effect.mapError(() => new Conflict({ message: "the sandbox's workspace could not be made" }))
          )
          yield* writeLibrary(sandbox, libraryFiles)
          const kernel = yield* Effect.tapError(startKernel(sandbox), () => discard(sandbox))
          sandbox.kernel = kernel
          live.set(sandboxId, sandbox)
          yield* countLive
        })),

      // Each execution is a span of the answer's or the request's trace (never with its code).
      execute: (sandboxId, code) =>
        Effect.flatMap(running(sandboxId), (sandbox) =>
          sandbox.lock.withPermits(1)(Effect.gen(function*() {
            const started = Date.now()
            const space = yield* room(sandbox)
            if (space.left <= 0) {
              return {
                output: null,
                error: quotaMessage(space.used),
                executionTimeMs: 0,
                files: [],
                dataframes: []
              } satisfies ExecuteResult
            }
            const answer = yield* onKernel(sandbox, { op: "execute", code })
            const quota = yield* overQuota(sandbox)
            if (answer._tag === "Lost") {
              return {
                output: null,
                error: quota === undefined ? answer.error : `${answer.error}; ${quota}`,
                executionTimeMs: Date.now() - started,
                files: [],
                dataframes: []
              } satisfies ExecuteResult
            }
            const value = answer.value as {
              readonly output: ReadonlyArray<string> | null
              readonly error?: string
              readonly failure?: string
              readonly execution_time_ms: number
              readonly files: ReadonlyArray<string>
              readonly dataframes: ReadonlyArray<{ name: string; num_rows: number; num_cols: number }>
            }
            const error = value.failure ?? value.error
            const errors = [error, quota].filter((e): e is string => e !== undefined)
            return {
              output: value.output === null || value.output === undefined ? null : value.output.map(storableText),
              ...(errors.length === 0 ? {} : { error: storableText(errors.join("; ")) }),
              executionTimeMs: Math.max(0, value.execution_time_ms ?? 0),
              files: (value.files ?? []).map((name) => ({ name, mimeType: mimeTypeOf(name) })),
              dataframes: (value.dataframes ?? []).map((df): DataframeInfo => ({
                name: df.name,
                numRows: df.num_rows,
                numCols: df.num_cols
              }))
            } satisfies ExecuteResult
          }))).pipe(Effect.withSpan("SandboxRuntime.execute", { attributes: { "sightline.sandbox.id": sandboxId } })),

      loadDataframe: (sandboxId, rows: DataframeRows) =>
        Effect.flatMap(running(sandboxId), (sandbox) =>
          sandbox.lock.withPermits(1)(Effect.gen(function*() {
            // In batches: one message of every row would be serialized in one go on the event loop
            // that every request shares (tens of MiB for a wide result), and held twice in memory.
            const batch = (start: number) =>
              onKernel(sandbox, {
                op: "load",
                name: rows.name,
                columns: rows.columns,
                rows: rows.rows.slice(start, start + loadBatchRows),
                append: start > 0
              })
            let answer = yield* batch(0)
            for (
              let start = loadBatchRows;
              answer._tag !== "Lost" && start < rows.rows.length;
              start += loadBatchRows
            ) {
              answer = yield* batch(start)
            }
            if (answer._tag === "Lost") {
              return { preview: "", numRows: 0, numCols: 0, error: answer.error } satisfies LoadResult
            }
            const value = answer.value as { preview?: string; num_rows?: number; num_cols?: number; failure?: string }
            return value.failure !== undefined
              ? { preview: "", numRows: 0, numCols: 0, error: `loading the rows into the kernel: ${value.failure}` }
              : { preview: value.preview ?? "", numRows: value.num_rows ?? 0, numCols: value.num_cols ?? 0 }
          }))),

      exec: (sandboxId, execOptions: ExecOptions) =>
        Effect.flatMap(running(sandboxId), (sandbox) =>
          Effect.gen(function*() {
            const argv = execOptions.kind === "python"
              ? [python, "-c", execOptions.command]
              : ["/bin/bash", "-c", execOptions.command]
            const space = yield* room(sandbox)
            if (space.left <= 0) {
              return { stdout: "", stderr: "", exitCode: -1, error: quotaMessage(space.used) } satisfies ExecResult
            }
            const { args, file } = commandFor(
              sandbox,
              limits.execCpuSeconds,
              execOptions.env ?? {},
              argv,
              Math.min(limits.fileSizeBytes, space.left)
            )
            const result = yield* Effect.promise(() =>
              runOnce(file, args, {
                timeoutMillis: limits.executionTimeoutMillis,
                capBytes: limits.outputBytes,
                track: (child) => {
                  sandbox.children.add(child)
                  return () => sandbox.children.delete(child)
                }
              })
            )
            const quota = yield* overQuota(sandbox)
            const error = result.timedOut
              ? `timed out after ${seconds(limits.executionTimeoutMillis)} and was killed`
              : result.signal === "SIGKILL"
              ? "killed (out of memory or a resource limit)"
              : result.signal === "SIGXCPU"
              ? "killed: it used up its CPU time"
              : undefined
            const errors = [error, quota].filter((e): e is string => e !== undefined)
            return {
              stdout: storableText(result.stdout),
              stderr: storableText(result.stderr),
              exitCode: result.exitCode,
              ...(errors.length === 0 ? {} : { error: errors.join("; ") })
            } satisfies ExecResult
          })),

      listFiles: (sandboxId, path) =>
        Effect.gen(function*() {
          const dir = path === undefined || path === "" ? "" : yield* checked(path)
          const sandbox = yield* running(sandboxId)
          const entries = yield* files(() => Workspace.list(sandbox.workspace, dir))
          return Option.map(
            Option.fromNullable(entries),
            (list) =>
              list.map((e) => ({
                name: e.name,
                sizeBytes: e.sizeBytes,
                isDir: e.isDir,
                modifiedAt: DateTime.unsafeFromDate(e.modifiedAt)
              }))
          )
        }),

      readFile: (sandboxId, path) =>
        Effect.gen(function*() {
          const file = yield* checked(path)
          const sandbox = yield* running(sandboxId)
          return Option.fromNullable(yield* files(() => Workspace.read(sandbox.workspace, file)))
        }),

      writeFile: (sandboxId, path, bytes) =>
        Effect.gen(function*() {
          const file = yield* checked(path)
          const sandbox = yield* running(sandboxId)
          const used = yield* Effect.promise(() => Workspace.usage(sandbox.workspace))
          if (used + bytes.length > limits.workspaceBytes) {
            return yield* new InvalidRequest({
              message: `the workspace would exceed its limit of ${Math.floor(limits.workspaceBytes / 1024 ** 2)} MiB`
            })
          }
          yield* files(() => Workspace.write(sandbox.workspace, file, bytes, sandbox.owner))
        }),

      deleteFile: (sandboxId, path) =>
        Effect.gen(function*() {
          const target = yield* checked(path)
          const sandbox = yield* running(sandboxId)
          return yield* files(() => Workspace.remove(sandbox.workspace, target, sandbox.trash))
        }),

      libraryChanges: (sandboxId) =>
        Effect.gen(function*() {
          const sandbox = yield* running(sandboxId)
          const current = yield* Effect.promise(() => Workspace.walk(sandbox.workspace, "library"))
          return diffLibrary(sandbox.snapshot, HashMap.fromIterable(current))
        }),

      mountLibrary: (sandboxId, libraryFiles) =>
        Effect.gen(function*() {
          const sandbox = yield* running(sandboxId)
          yield* Effect.promise(() => Workspace.remove(sandbox.workspace, "library", sandbox.trash))
          yield* writeLibrary(sandbox, libraryFiles)
          sandbox.snapshot = libraryFiles
        }),

      stop: (sandboxId) =>
        registry.withPermits(1)(Effect.suspend(() => {
          const sandbox = live.get(sandboxId)
          if (sandbox === undefined) return Effect.void
          live.delete(sandboxId)
          return Effect.zipRight(countLive, discard(sandbox))
        })),

      status: (sandboxId) =>
        Effect.suspend(() => {
          const sandbox = live.get(sandboxId)
          if (sandbox === undefined) return Effect.succeed<SandboxStatus>({ status: "stopped", dataframes: [] })
          const kernel = sandbox.kernel
          // A kernel busy with a long cell does not hold the status up: it is reported without its details.
          return sandbox.lock.withPermits(1)(
            kernel === undefined || kernel.exit !== undefined
              ? Effect.succeed<Outcome | undefined>(undefined)
              : Effect.promise(() => kernel.request({ op: "status" }, 5_000))
          ).pipe(
            Effect.timeoutTo({ duration: "2 seconds", onTimeout: () => undefined, onSuccess: (o) => o }),
            Effect.map((outcome): SandboxStatus => {
              if (outcome?._tag !== "Answer") return { status: "running", dataframes: [] }
              const value = outcome.value as {
                memory_usage_bytes?: number
                dataframes?: ReadonlyArray<
                  { name: string; num_rows: number; num_cols: number; memory_usage_bytes: number }
                >
              }
              return {
                status: "running",
                ...(value.memory_usage_bytes === undefined ? {} : { memoryUsageBytes: value.memory_usage_bytes }),
                dataframes: (value.dataframes ?? []).map((df) => ({
                  name: df.name,
                  numRows: df.num_rows,
                  numCols: df.num_cols,
                  memoryUsageBytes: df.memory_usage_bytes
                }))
              }
            })
          )
        })
    }

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        for (const sandbox of live.values()) {
          sandbox.kernel?.kill()
          for (const child of sandbox.children) child.kill("SIGKILL")
        }
        live.clear()
        await removeTree(instance)
      }).pipe(Effect.zipRight(countLive))
    )
    return runtime
  })

/**
 * The runtime as a layer; fails with `SandboxUnavailable` where sandboxes cannot run.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<SandboxRuntime, SandboxUnavailable> =>
  Layer.scoped(SandboxRuntime, make(options))

/**
 * The runtime where it can run, else `SandboxRuntime.layerUnavailable` with the reason (what to
 * install), so a server starts either way and says why no sandbox starts.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerOrUnavailable = (options: Options): Layer.Layer<SandboxRuntime> =>
  Layer.catchAll(layer(options), (error) => layerUnavailable(error.reason))
