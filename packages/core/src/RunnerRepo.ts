/**
 * The registry of sandbox runners: the server processes that run sandboxes, where the others reach
 * them, and when each was last seen.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"

/**
 * A registered runner.
 *
 * @since 0.1.0
 * @category models
 */
export interface Runner {
  readonly id: string
  /** Where the other processes reach its sandbox channel. */
  readonly url: string
  readonly lastSeenAt: DateTime.Utc
  /** It is shutting down: it takes no new sandboxes. */
  readonly draining: boolean
}

/**
 * Stores the runners.
 *
 * @since 0.1.0
 * @category services
 */
export class RunnerRepo extends Context.Tag("@sightline/core/RunnerRepo")<RunnerRepo, RunnerRepo.Service>() {}

export declare namespace RunnerRepo {
  /** Runner storage, shared by every process of a deployment. */
  export interface Service {
    /** Registers a runner, or records its heartbeat (and whether it drains). */
    readonly heartbeat: (runner: Omit<Runner, "lastSeenAt">, at: DateTime.Utc) => Effect.Effect<void>
    readonly get: (id: string) => Effect.Effect<Option.Option<Runner>>
    /** The runner seen since `seenSince`, not draining, that runs the fewest sandboxes. */
    readonly leastLoaded: (seenSince: DateTime.Utc) => Effect.Effect<Option.Option<Runner>>
    /** Forgets a runner (it stopped). */
    readonly remove: (id: string) => Effect.Effect<void>
  }
}

/**
 * Runners in memory, for tests: `leastLoaded` cannot see sandboxes, so it takes the runner seen last.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<RunnerRepo> = Layer.effect(
  RunnerRepo,
  Effect.map(Ref.make(HashMap.empty<string, Runner>()), (table) =>
    RunnerRepo.of({
      heartbeat: (runner, at) => Ref.update(table, HashMap.set(runner.id, { ...runner, lastSeenAt: at })),
      get: (id) => Effect.map(Ref.get(table), HashMap.get(id)),
      leastLoaded: (seenSince) =>
        Effect.map(Ref.get(table), (rows) =>
          Option.fromNullable(
            Array.from(HashMap.values(rows))
              .filter((runner) => !runner.draining && !DateTime.lessThan(runner.lastSeenAt, seenSince))
              .sort((a, b) => DateTime.toEpochMillis(b.lastSeenAt) - DateTime.toEpochMillis(a.lastSeenAt))[0]
          )),
      remove: (id) => Ref.update(table, HashMap.remove(id))
    }))
)
