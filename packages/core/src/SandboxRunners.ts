/**
 * Where sandboxes run. A sandbox's kernel and workspace live in one server process (its runner) and
 * on that machine's disk; every other process reaches them through the sandbox channel, so any
 * process can serve every request and every `run_python` step for any sandbox.
 *
 * - `layerLocal`: one process runs every sandbox it starts and reaches no other (the embedded
 *   store, a host without a channel). A sandbox stored with another runner is reported as
 *   unreachable from here.
 * - `layer`: a deployment of several processes. A process that runs sandboxes registers as a runner
 *   (`RunnerRepo`) with the address of its channel and a heartbeat; a new sandbox goes to the
 *   least loaded runner; a call for a sandbox of another runner goes through `SandboxChannel`. On
 *   shutdown a runner drains: it takes no new sandboxes, and its sandboxes are stopped saying why.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import { Conflict } from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import type { SandboxId } from "./Ids.js"
import { RunnerRepo } from "./RunnerRepo.js"
import * as Sandbox from "./Sandbox.js"
import { SandboxRepo } from "./SandboxRepo.js"
import * as Runtime from "./SandboxRuntime.js"

/**
 * Reaches the sandboxes of another process: the runtime of the runner at `url`. Calls that cannot
 * reach it fail with `SandboxNotRunning` saying so; its `status` is then `stopped`.
 *
 * @since 0.1.0
 * @category services
 */
export class SandboxChannel extends Context.Tag("@sightline/core/SandboxRunners/SandboxChannel")<
  SandboxChannel,
  { readonly connect: (url: string) => Runtime.SandboxRuntime.Service }
>() {}

/**
 * The runners of sandboxes, and the way to each.
 *
 * @since 0.1.0
 * @category services
 */
export class SandboxRunners extends Context.Tag("@sightline/core/SandboxRunners")<
  SandboxRunners,
  SandboxRunners.Service
>() {}

export declare namespace SandboxRunners {
  /** Placement and routing of sandboxes. */
  export interface Service {
    /** This process's runner id: the sandboxes it runs are stored with it. */
    readonly self: string
    /** Whether sandboxes can start from this process (here or on a runner it reaches). */
    readonly available: boolean
    /** The runner of a new sandbox: the least loaded one that is alive and not draining. */
    readonly place: Effect.Effect<string, Conflict>
    /** The runtime of the runner that holds a sandbox (this process's own for `self` and for none). */
    readonly runtime: (runnerId: string | undefined) => Effect.Effect<Runtime.SandboxRuntime.Service>
    /**
     * Stops taking new sandboxes here, at the start of a shutdown: the sandboxes here keep serving
     * what is in flight until the process lets them go.
     */
    readonly drain: Effect.Effect<void>
  }
}

/**
 * A runtime for sandboxes that are out of reach: every call says why, and they read as stopped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unreachable = (message: (id: SandboxId) => string): Runtime.SandboxRuntime.Service => {
  const fail = (sandboxId: SandboxId) =>
    Effect.fail(new Runtime.SandboxNotRunning({ sandboxId, message: message(sandboxId) }))
  return {
    available: false,
    start: (options) => Effect.fail(new Conflict({ message: message(options.sandboxId) })),
    execute: fail,
    loadDataframe: fail,
    exec: fail,
    listFiles: fail,
    readFile: fail,
    writeFile: fail,
    deleteFile: fail,
    libraryChanges: fail,
    mountLibrary: fail,
    stop: () => Effect.void,
    status: () => Effect.succeed({ status: "stopped", dataframes: [] })
  }
}

const elsewhere = unreachable((id) =>
  `sandbox ${id} runs on another server process, which this one has no channel to (see the deployment guide); restart it with POST /v2/sandcastles {"sandbox_id": "${id}"}`
)

const gone = unreachable((id) =>
  `sandbox ${id} is not running: its server process stopped or died, and its kernel and workspace with it; restart it with POST /v2/sandcastles {"sandbox_id": "${id}"}`
)

/**
 * One process that runs the sandboxes it starts, with the runtime in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLocal: Layer.Layer<SandboxRunners, never, Runtime.SandboxRuntime | IdGenerator> = Layer.effect(
  SandboxRunners,
  Effect.gen(function*() {
    const local = yield* Runtime.SandboxRuntime
    const self = yield* (yield* IdGenerator).uuid
    return SandboxRunners.of({
      self,
      available: local.available,
      place: Effect.succeed(self),
      runtime: (runnerId) => Effect.succeed(runnerId === undefined || runnerId === self ? local : elsewhere),
      drain: Effect.void
    })
  })
)

/**
 * How a process takes part in a deployment of several.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Where the other processes reach this one's sandbox channel; absent: it runs no sandboxes. */
  readonly url?: string | undefined
  /** How often a runner's heartbeat is written (default 10 s); it is gone after three missed. */
  readonly heartbeatMillis?: number | undefined
}

/**
 * The processes of a deployment over one store: runners in `RunnerRepo`, reached through
 * `SandboxChannel`, and this process one of them when it has a runtime and a `url`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<
  SandboxRunners,
  never,
  Runtime.SandboxRuntime | IdGenerator | RunnerRepo | SandboxRepo | SandboxChannel
> =>
  Layer.scoped(
    SandboxRunners,
    Effect.gen(function*() {
      const local = yield* Runtime.SandboxRuntime
      const runners = yield* RunnerRepo
      const sandboxes = yield* SandboxRepo
      const channel = yield* SandboxChannel
      const self = yield* (yield* IdGenerator).uuid
      const heartbeatMillis = options.heartbeatMillis ?? 10_000
      const hosts = local.available && options.url !== undefined
      const aliveSince = Effect.map(DateTime.now, DateTime.subtract({ millis: 3 * heartbeatMillis }))
      const draining = yield* Ref.make(false)
      const runner = { id: self, url: options.url ?? "" }
      const beat = Effect.flatMap(
        Effect.zip(Ref.get(draining), DateTime.now),
        ([drains, now]) => runners.heartbeat({ ...runner, draining: drains }, now)
      )

      if (hosts) {
        yield* beat
        yield* Effect.forkScoped(
          Effect.repeat(Effect.catchAllCause(beat, Effect.logWarning), Schedule.spaced(heartbeatMillis))
        )
        // At the end: no new sandboxes here (if the drain did not say so already), then this
        // runner's sandboxes are stopped saying why (the runtime's own finalizer ends their
        // processes) and the runner is forgotten.
        yield* Effect.addFinalizer(() =>
          Effect.gen(function*() {
            yield* Ref.set(draining, true)
            yield* beat
            const now = yield* DateTime.now
            yield* sandboxes.releaseRunner(self, now, Sandbox.RUNNER_SHUT_DOWN)
            yield* runners.remove(self)
          }).pipe(Effect.catchAllCause(Effect.logWarning))
        )
      }

      return SandboxRunners.of({
        self,
        available: true,
        place: Effect.gen(function*() {
          const found = yield* runners.leastLoaded(yield* aliveSince)
          if (Option.isNone(found)) {
            return yield* new Conflict({
              message: "no server process runs sandboxes now (every runner is stopped or draining); try again shortly"
            })
          }
          return found.value.id
        }),
        runtime: (runnerId) =>
          Effect.gen(function*() {
            if (runnerId === undefined || runnerId === self) return hosts ? local : gone
            const found = yield* runners.get(runnerId)
            if (Option.isNone(found) || DateTime.lessThan(found.value.lastSeenAt, yield* aliveSince)) return gone
            return channel.connect(found.value.url)
          }),
        drain: hosts
          ? Ref.set(draining, true).pipe(Effect.zipRight(beat), Effect.catchAllCause(Effect.logWarning))
          : Effect.void
      })
    })
  )
