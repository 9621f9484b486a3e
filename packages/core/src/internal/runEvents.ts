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

type Item =
  | { readonly _tag: "Event"; readonly event: ChatEvent.Sequenced }
  | { readonly _tag: "Drain"; readonly drained: Deferred.Deferred<void> }
  | { readonly _tag: "Take"; readonly taken: Deferred.Deferred<ReadonlyArray<ChatEvent.Sequenced>> }

/** Starts the writer; it stops when the scope closes. */
export const make = (options: Options): Effect.Effect<Writer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Item>()
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

    const write = (items: ReadonlyArray<Item>) =>
      Effect.gen(function*() {
        const takeAt = items.findIndex((item) => item._tag === "Take")
        const events = (takeAt === -1 ? items : items.slice(0, takeAt))
          .flatMap((item) => item._tag === "Event" ? [item.event] : [])
        if (takeAt !== -1) {
          const handedOver = refused || taken ? [] : events
          taken = true
          yield* Deferred.succeed((items[takeAt] as Extract<Item, { _tag: "Take" }>).taken, handedOver)
          return
        }
        if (events.length === 0 || refused || taken) return
        const batch = events as unknown as Arr.NonEmptyReadonlyArray<ChatEvent.Sequenced>
        if (yield* options.append(batch)) {
          yield* lock.withPermits(1)(publishAll(batch))
        } else {
          refused = true
          yield* catchUp
        }
      }).pipe(
        // A store that fails (a lost database) ends the writing, not the run: its end is written
        // (or fails) on the run's own path, and nothing waits on a writer that died.
        Effect.catchAllCause((cause) =>
          Effect.suspend(() => {
            refused = true
            return Effect.logError("storing a chat run's events failed", cause)
          })
        ),
        Effect.ensuring(Effect.forEach(
          items,
          (item) =>
            item._tag === "Drain"
              ? Deferred.succeed(item.drained, undefined)
              // Only when the writing failed before the hand-over: those events are lost with the rest.
              : item._tag === "Take"
              ? Deferred.succeed(item.taken, [])
              : Effect.void,
          { discard: true }
        ))
      )

    yield* Queue.take(queue).pipe(
      Effect.flatMap((first) => Effect.map(Queue.takeAll(queue), (rest) => [first, ...rest])),
      Effect.flatMap(write),
      Effect.forever,
      Effect.forkScoped
    )

    return {
      emit: (event) =>
        Effect.suspend(() => {
          if (refused || taken) return Effect.void
          const id = next
          next += 1
          return Queue.offer(queue, { _tag: "Event", event: { id, event } })
        }),
      drain: Effect.flatMap(
        Deferred.make<void>(),
        (drained) => Effect.zipRight(Queue.offer(queue, { _tag: "Drain", drained }), Deferred.await(drained))
      ),
      take: Effect.flatMap(
        Deferred.make<ReadonlyArray<ChatEvent.Sequenced>>(),
        (handed) => Effect.zipRight(Queue.offer(queue, { _tag: "Take", taken: handed }), Deferred.await(handed))
      ),
      stored: (events) => lock.withPermits(1)(publishAll(events)),
      catchUp
    }
  })
