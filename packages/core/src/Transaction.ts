/**
 * The transaction boundary port: multi-step writes (create key + audit entry, approve + merge +
 * status) run inside `withTransaction` so that a failure or a crash between steps leaves nothing
 * half-written.
 *
 * Repository reads named `...ForUpdate` are only meaningful inside a transaction: the SQL adapter
 * takes a row lock there, so concurrent callers of the same use case queue up instead of racing.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"

/**
 * Runs effects atomically: all of their writes commit, or none do.
 *
 * @since 0.1.0
 * @category services
 */
export class Transaction extends Context.Tag("@sightline/core/Transaction")<
  Transaction,
  Transaction.Service
>() {}

export declare namespace Transaction {
  /**
   * The transaction boundary. A nested call is a savepoint of the outer transaction: its failure
   * rolls back its own writes only (the outer one may catch it and go on); its success commits
   * with the outer transaction.
   */
  export interface Service {
    readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  }
}

/**
 * Runs `effect` in a transaction of the `Transaction` service in context.
 *
 * @since 0.1.0
 * @category utils
 */
export const withTransaction = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | Transaction> => Effect.flatMap(Transaction, (tx) => tx.withTransaction(effect))

/**
 * The shared state of every in-memory repository. Each memory implementation keeps its rows in a
 * `Ref` registered here, so that a memory transaction can snapshot and restore all of them and so
 * that every memory operation is serialized (the memory analogue of row locks).
 *
 * @since 0.1.0
 * @category services
 */
export class MemoryState extends Context.Tag("@sightline/core/Transaction/MemoryState")<
  MemoryState,
  MemoryState.Service
>() {}

export declare namespace MemoryState {
  /** Registration of memory tables and serialized access to them. */
  export interface Service {
    /** Creates a table (a `Ref` of an immutable value) that transactions snapshot and restore. */
    readonly table: <S>(initial: S) => Effect.Effect<Ref.Ref<S>>
    /** Runs a repository operation serialized with every other one (joining a running transaction). */
    readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  }
}

const makeMemory = Effect.gen(function*() {
  const lock = yield* Effect.makeSemaphore(1)
  const inside = FiberRef.unsafeMake(false)
  const tables: Array<Ref.Ref<any>> = []

  const serialized = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(
      FiberRef.get(inside),
      (joined) => joined ? effect : lock.withPermits(1)(Effect.locally(effect, inside, true))
    )

  const state: MemoryState.Service = {
    table: (initial) =>
      Effect.map(Ref.make(initial), (ref) => {
        tables.push(ref)
        return ref
      }),
    run: serialized
  }

  // Every table as it is now, and the effect that puts them back: a transaction's start, or a
  // savepoint's.
  const rollbackOnFailure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(
      Effect.forEach(tables, Ref.get),
      (snapshot) =>
        Effect.onExit(effect, (exit) =>
          exit._tag === "Success"
            ? Effect.void
            : Effect.forEach(tables, (ref, i) => Ref.set(ref, snapshot[i]), { discard: true }))
    )

  const transaction: Transaction.Service = {
    // A nested call is a savepoint, as in SQL: its failure undoes its own writes only, and the
    // outer transaction may catch it and go on.
    withTransaction: (effect) =>
      Effect.flatMap(
        FiberRef.get(inside),
        (joined) => joined ? rollbackOnFailure(effect) : serialized(rollbackOnFailure(effect))
      )
  }
  return { state, transaction }
})

/**
 * In-memory transactions: serialized, and rolled back on failure or interruption by restoring a
 * snapshot of every memory table. Also provides `MemoryState` for the memory repositories.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<Transaction | MemoryState> = Layer.effectContext(
  Effect.map(
    makeMemory,
    ({ state, transaction }) => Context.make(Transaction, transaction).pipe(Context.add(MemoryState, state))
  )
)
