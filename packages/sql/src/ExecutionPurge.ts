/**
 * The purge of execution records past retention (`Execution.RETENTION`, 30 days), as an effect and as
 * a layer that runs it at start-up and then every hour.
 *
 * The purge is idempotent and exact (it deletes the rows strictly older than the cutoff, and a second
 * run deletes nothing more), so every process of a deployment may run the schedule: concurrent runs
 * delete each row once between them.
 *
 * @since 0.1.0
 */
import * as Execution from "@sightline/core/Execution"
import { ExecutionRepo } from "@sightline/core/ExecutionRepo"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"

/**
 * How often `layerSchedule` purges.
 *
 * @since 0.1.0
 * @category constants
 */
export const interval: Duration.Duration = Duration.hours(1)

/**
 * Deletes the executions created more than `Execution.RETENTION` ago; returns how many it deleted.
 *
 * @since 0.1.0
 * @category utils
 */
export const purgeExpired: Effect.Effect<number, never, ExecutionRepo> = Effect.gen(function*() {
  const repo = yield* ExecutionRepo
  const cutoff = Execution.retentionCutoff(yield* DateTime.now)
  const deleted = yield* repo.purgeOlderThan(cutoff)
  yield* Effect.annotateCurrentSpan({ cutoff: DateTime.formatIso(cutoff), deleted })
  return deleted
}).pipe(Effect.withSpan("ExecutionPurge.purgeExpired"))

/**
 * `purgeExpired` now and then every `every`, for ever. A failed run (the database is unreachable) is
 * logged and the schedule goes on, so an outage never stops purging for good.
 *
 * @since 0.1.0
 * @category utils
 */
export const runEvery = (every: Duration.DurationInput): Effect.Effect<never, never, ExecutionRepo> =>
  purgeExpired.pipe(
    Effect.tap((deleted) => Effect.logDebug("purged expired executions", { deleted })),
    Effect.catchAllCause((cause) => Effect.logWarning("execution purge failed; retrying at the next run", cause)),
    Effect.repeat(Schedule.spaced(every)),
    Effect.zipRight(Effect.never)
  )

/**
 * Runs the purge at start-up and then every hour, in a background fiber that is interrupted when the
 * layer's scope closes. A server adds it beside the store: `Layer.provide(ExecutionPurge.layerSchedule, store)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSchedule: Layer.Layer<never, never, ExecutionRepo> = Layer.scopedDiscard(
  Effect.forkScoped(runEvery(interval))
)
