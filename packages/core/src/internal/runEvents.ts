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
 * The readers are the run's `Broadcast`: it keeps every published event for the run's lifetime, so
 * that a reader who comes late (or reads slowly) still has the whole run from `metadata`, at its own
 * pace, and it ends with the run's `done`.
 *
 * @internal
 */
import type * as Arr from "effect/Array"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ChatEvent from "../ChatEvent.js"

/** A run's readers, in this process. */
export interface Broadcast {
  /**
   * Hands a batch to every reader, up to and including the run's `done` (what the log holds after
   * it belongs to a newer run, not this one), then announces the append with `announce`.
   */
  readonly publish: (batch: ReadonlyArray<ChatEvent.Sequenced>) => Effect.Effect<void>
  /**
   * Hands `listener` every event so far, at once, then each batch as it is published,
   * synchronously; returns what stops it. A listener that throws is dropped.
   */
  readonly listen: (listener: (events: ReadonlyArray<ChatEvent.Sequenced>) => void) => () => void
  /** Every event from the first, then live, ending with `done`. Each read starts over. */
  readonly events: Stream.Stream<ChatEvent.Sequenced>
  /** Waits for the run's `done`. */
  readonly done: Effect.Effect<ChatEvent.Done>
  /** Whether the run's `done` was published. */
  readonly ended: Effect.Effect<boolean>
}

/** A run's broadcast; `announce` tells other processes (the chat's event bus) the last id published. */
export const broadcast = (announce: (lastId: number) => Effect.Effect<void>): Effect.Effect<Broadcast> =>
  Effect.map(Deferred.make<ChatEvent.Done>(), (done) => {
    const published: Array<ChatEvent.Sequenced> = []
    const listeners = new Set<(events: ReadonlyArray<ChatEvent.Sequenced>) => void>()
    let ended = false
    const publish = (batch: ReadonlyArray<ChatEvent.Sequenced>) =>
      Effect.suspend(() => {
        if (batch.length === 0) return Effect.void
        let broken: unknown
        // This batch's `done`, if the run ends with it.
        let end: ChatEvent.Done | undefined
        if (!ended) {
          let told = batch
          for (let i = 0; i < batch.length; i++) {
            const event = batch[i]!.event
            if (ChatEvent.isDone(event)) {
              ended = true
              end = event
              told = batch.slice(0, i + 1)
              break
            }
          }
          for (const sequenced of told) published.push(sequenced)
          // A listener that throws is dropped, and the run and its other listeners go on.
          for (const listener of listeners) {
            try {
              listener(told)
            } catch (defect) {
              listeners.delete(listener)
              broken = defect
            }
          }
        }
        return Effect.zipRight(
          end === undefined ? Effect.void : Deferred.succeed(done, end),
          announce(batch[batch.length - 1]!.id)
        ).pipe(
          Effect.zipLeft(broken === undefined ? Effect.void : Effect.logError("a listener of a run failed", broken))
        )
      })
    const listen = (listener: (events: ReadonlyArray<ChatEvent.Sequenced>) => void) => {
      if (published.length > 0) listener(published.slice())
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    }
    return {
      publish,
      listen,
      // Unbounded: every event, however slowly it is read (a bounded buffer would drop some).
      events: Stream.asyncPush<ChatEvent.Sequenced>(
        (emit) =>
          Effect.acquireRelease(
            Effect.sync(() =>
              listen((events) => {
                void emit.chunk(Chunk.unsafeFromArray(events))
                if (ChatEvent.isDone(events[events.length - 1]!.event)) void emit.end()
              })
            ),
            (stop) => Effect.sync(stop)
          ),
        { bufferSize: "unbounded" }
      ),
      done: Deferred.await(done),
      ended: Deferred.isDone(done)
    }
  })

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
