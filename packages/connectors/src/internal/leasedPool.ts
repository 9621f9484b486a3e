/**
 * A keyed pool of at most `capacity` open resources, each used under a lease. A key's resource is
 * opened at its first lease and stays open for the next; when the pool is full, the least recently
 * used one that no lease holds is closed to make room, and when every one is leased, the new key waits
 * for a lease to end. So what the resources hold (a FILES database's memory budget) is bounded by
 * `capacity` times one, whatever the number of keys.
 *
 * Effect's `RcMap` counts references but fails at its capacity instead of making room; this is the
 * same idea with least-recently-used eviction.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"

/** The pool. */
export interface LeasedPool<K, A, E> {
  /** Runs `f` with `key`'s resource, which stays open (and is not evicted) until `f` ends. */
  readonly use: <B, E2, R>(key: K, f: (resource: A) => Effect.Effect<B, E2, R>) => Effect.Effect<B, E | E2, R>
  /** Forgets the key of this identity: its resource is closed now, or when its last lease ends. */
  readonly invalidate: (key: string) => Effect.Effect<void>
  /** How many resources are open. */
  readonly size: Effect.Effect<number>
}

interface Entry<A> {
  readonly resource: A
  readonly scope: Scope.CloseableScope
  leases: number
  lastUsed: number
  forgotten: boolean
}

/** Builds the pool; its resources close with the scope. */
export const make = <K, A, E>(options: {
  readonly capacity: number
  /** A key's identity: two keys of one identity share a resource. */
  readonly identity: (key: K) => string
  readonly open: (key: K) => Effect.Effect<A, E, Scope.Scope>
}): Effect.Effect<LeasedPool<K, A, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const parent = yield* Effect.scope
    const capacity = Math.max(1, options.capacity)
    const entries = new Map<string, Entry<A>>()
    // Leases taken and given back one at a time; opening happens under it too, so a key opens once.
    const lock = yield* Effect.makeSemaphore(1)
    let clock = 0
    // Those waiting for a lease to end, woken together to try again.
    let waiting: Array<Deferred.Deferred<void>> = []

    const wake = Effect.suspend(() => {
      const woken = waiting
      waiting = []
      return Effect.forEach(woken, (d) => Deferred.succeed(d, undefined), { discard: true })
    })

    // A lease of `key`, or what to wait for when every open resource is leased.
    const tryLease = (key: K) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const id = options.identity(key)
        const found = entries.get(id)
        if (found !== undefined) {
          found.leases++
          found.lastUsed = ++clock
          return { _tag: "Leased", entry: found } as const
        }
        if (entries.size >= capacity) {
          let idle: [string, Entry<A>] | undefined
          for (const candidate of entries) {
            if (candidate[1].leases === 0 && (idle === undefined || candidate[1].lastUsed < idle[1].lastUsed)) {
              idle = candidate
            }
          }
          if (idle === undefined) {
            const turn = yield* Deferred.make<void>()
            waiting.push(turn)
            return { _tag: "Wait", turn } as const
          }
          entries.delete(idle[0])
          yield* Scope.close(idle[1].scope, Exit.void)
        }
        const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
        const resource = yield* options.open(key).pipe(
          Scope.extend(scope),
          Effect.tapError(() => Scope.close(scope, Exit.void))
        )
        const entry: Entry<A> = { resource, scope, leases: 1, lastUsed: ++clock, forgotten: false }
        entries.set(id, entry)
        return { _tag: "Leased", entry } as const
      }))

    const giveBack = (entry: Entry<A>) =>
      lock.withPermits(1)(Effect.gen(function*() {
        entry.leases--
        if (entry.leases > 0) return
        if (entry.forgotten) yield* Scope.close(entry.scope, Exit.void)
        yield* wake
      }))

    const use = <B, E2, R>(key: K, f: (resource: A) => Effect.Effect<B, E2, R>): Effect.Effect<B, E | E2, R> =>
      Effect.acquireUseRelease(
        tryLease(key),
        (lease): Effect.Effect<Option.Option<B>, E2, R> =>
          lease._tag === "Leased"
            ? Effect.map(f(lease.entry.resource), Option.some)
            : Effect.as(Deferred.await(lease.turn), Option.none()),
        (lease) => lease._tag === "Leased" ? giveBack(lease.entry) : Effect.void
      ).pipe(
        // Woken: a lease ended or a resource went, so there may be room now.
        Effect.flatMap(Option.match({ onNone: () => use(key, f), onSome: Effect.succeed }))
      )

    const invalidate = (key: string) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const entry = entries.get(key)
        if (entry === undefined) return
        entries.delete(key)
        entry.forgotten = true
        if (entry.leases === 0) yield* Scope.close(entry.scope, Exit.void)
        yield* wake
      }))

    return { use, invalidate, size: Effect.sync(() => entries.size) }
  })
