/**
 * A run's events on their way to its chat's log. `emit` queues an event and returns at once (the
 * run never waits on the store); one writer appends whatever has queued as one batch, and only
 * then hands the batch to the run's readers. So every reader (the asker, a follower on another
 * process, a client that resumes) sees exactly the history the log holds.
 *
 * At the end of an answer, `take` hands the events still queued to the run instead, which stores
 * them in the same statement as its end: the last words and `done` cost one round trip, not two.
 *
 * When the log refuses a batch, someone else ended the run (a cancel from another process, a
 * stale-run sweep): the writer then reads the end they wrote and hands it on instead, and drops
 * whatever the run emits afterwards.
 *
 * @internal
 */
import type * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type * as ChatEvent from "../ChatEvent.js"

/** What the writer works with. */
export interface Options {
  /** The id of the run's first event (`metadata`), already stored and published. */
  readonly first: number
  /** Appends a batch; false when the log refuses it. */
  readonly append: (events: Arr.NonEmptyReadonlyArray<ChatEvent.Sequenced>) => Effect.Effect<boolean>
  /** The run's stored events after an id. */
  readonly readAfter: (id: number) => Effect.Effect<ReadonlyArray<ChatEvent.Sequenced>>
  /** Hands stored events to the readers, in order. */
  readonly publish: (events: Arr.NonEmptyReadonlyArray<ChatEvent.Sequenced>) => Effect.Effect<void>
}

/** The writer of one run. */
export interface Writer {
  /** Queues an event under the run's next id (dropped once the log refused the run). */
  readonly emit: (event: ChatEvent.ChatEvent) => Effect.Effect<void>
  /** Waits until everything emitted so far is stored and published (or refused, or handed over by `take`). */
  readonly drain: Effect.Effect<void>
  /**
   * Stops writing: waits for a batch in flight and returns the events queued after it, which the
   * run stores with its end (none once the log refused the run). Later events are dropped.
   */
  readonly take: Effect.Effect<ReadonlyArray<ChatEvent.Sequenced>>
  /** Publishes events the run stored itself (its `done`, written with its end). */
  readonly stored: (events: Arr.NonEmptyReadonlyArray<ChatEvent.Sequenced>) => Effect.Effect<void>
  /** Reads the log after the last published event and publishes what it finds. */
  readonly catchUp: Effect.Effect<void>
}

/** Starts the writer; it stops when the scope closes. */
export const make = (options: Options): Effect.Effect<Writer, never, Scope.Scope> =>
  Effect.gen(function*() {
    // What was emitted and not yet written. A plain array and a wake-up, not a queue of items:
    // `take` and `drain` read the writer's state where they are, so the end of an answer does not
    // wait on the writer's fiber to wake, look and answer (two fiber hops on the way to `done`).
    let queued: Array<ChatEvent.Sequenced> = []
    const wake = yield* Queue.sliding<void>(1)
    // Settled (and cleared) each time the writer has looked at what was queued.
    let looked: Deferred.Deferred<void> | undefined
    let writing = false
    // One publisher at a time: the writer's fiber and the run's own end never interleave batches.
    const lock = yield* Effect.makeSemaphore(1)
    let next = options.first + 1
    let published = options.first
    let refused = false
    // `take` has handed the queue over: nothing more is written.
    let taken = false

    const publishAll = (events: ReadonlyArray<ChatEvent.Sequenced>) => {
      // An event at or before the last published one was handed on already (a catch-up overlap).
      const fresh = events.filter((event) => event.id > published)
      if (fresh.length === 0) return Effect.void
      published = fresh[fresh.length - 1]!.id
      return options.publish(fresh as unknown as Arr.NonEmptyReadonlyArray<ChatEvent.Sequenced>)
    }
    const catchUp = lock.withPermits(1)(
      Effect.suspend(() => Effect.flatMap(options.readAfter(published), publishAll))
    )

    const write = Effect.suspend(() => {
      if (queued.length === 0 || refused || taken) return Effect.void
      const batch = queued as unknown as Arr.NonEmptyReadonlyArray<ChatEvent.Sequenced>
      queued = []
      writing = true
      return Effect.flatMap(options.append(batch), (appended) =>
        appended ? lock.withPermits(1)(publishAll(batch)) : Effect.suspend(() => {
          refused = true
          return catchUp
        })).pipe(
          // A store that fails (a lost database) ends the writing, not the run: its end is written
          // (or fails) on the run's own path, and nothing waits on a writer that died.
          Effect.catchAllCause((cause) =>
            Effect.suspend(() => {
              refused = true
              return Effect.logError("storing a chat run's events failed", cause)
            })
          ),
          Effect.ensuring(Effect.sync(() => {
            writing = false
          }))
        )
    })
    yield* Queue.take(wake).pipe(
      Effect.zipRight(write),
      Effect.zipRight(Effect.suspend(() => {
        const waiting = looked
        looked = undefined
        return waiting === undefined ? Effect.void : Deferred.succeed(waiting, undefined)
      })),
      Effect.forever,
      Effect.forkScoped
    )
    // Until the writer has looked at the queue again (and written what it found).
    const writerLooked = Effect.suspend(() => {
      if (looked !== undefined) {
        return Deferred.await(looked)
      }
      return Effect.flatMap(Deferred.make<void>(), (waiting) => {
        looked = waiting
        return Effect.zipRight(Queue.offer(wake, undefined), Deferred.await(waiting))
      })
    })
    const pending = () =>
      writing || (queued.length > 0 && !refused && !taken)

    const drain: Effect.Effect<void> = Effect.suspend(() =>
      pending() ? Effect.zipRight(writerLooked, drain) : Effect.void
    )
    const handOver: Effect.Effect<ReadonlyArray<ChatEvent.Sequenced>> = Effect.suspend(() => {
      if (writing) {
        return Effect.zipRight(writerLooked, handOver)
      }
      const events = refused ? [] : queued
      queued = []
      return Effect.succeed(events)
    })

    return {
      emit: (event) =>
        Effect.suspend(() => {
          if (refused || taken) {
            return Effect.void
          }
          queued.push({ id: next, event })
          next += 1
          return Queue.offer(wake, undefined)
        }),
      drain,
      take: Effect.suspend(() => {
        taken = true
        return handOver
      }),
      stored: (events) =>
        lock.withPermits(1)(publishAll(events)),
      catchUp
    }
  })
