import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as LeasedPool from "../src/internal/leasedPool.js"

// A pool of two whose resources record when they open and close.
const pool = Effect.gen(function*() {
  const opened: Array<string> = []
  const closed: Array<string> = []
  const made = yield* LeasedPool.make({
    capacity: 2,
    identity: (key: string) => key,
    open: (key) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          opened.push(key)
          return key.toUpperCase()
        }),
        () => Effect.sync(() => closed.push(key))
      )
  })
  return { pool: made, opened, closed }
})

describe("LeasedPool", () => {
  it.scoped("keeps a key's resource for the next lease, and closes the least recently used idle one past capacity", () =>
    Effect.gen(function*() {
      const { closed, opened, pool: p } = yield* pool
      expect(yield* p.use("a", Effect.succeed)).toBe("A")
      expect(yield* p.use("a", Effect.succeed)).toBe("A")
      yield* p.use("b", Effect.succeed)
      yield* p.use("a", Effect.succeed) // b is now the least recently used
      yield* p.use("c", Effect.succeed)
      expect(opened).toEqual(["a", "b", "c"])
      expect(closed).toEqual(["b"])
      expect(yield* p.size).toBe(2)
    }))

  it.scopedLive("never closes a leased resource: a new key waits for a lease to end, then takes its place", () =>
    Effect.gen(function*() {
      const { closed, opened, pool: p } = yield* pool
      const holdA = yield* Deferred.make<void>()
      const holdB = yield* Deferred.make<void>()
      const inA = yield* Deferred.make<void>()
      const inB = yield* Deferred.make<void>()
      const a = yield* Effect.fork(
        p.use("a", () => Effect.zipRight(Deferred.succeed(inA, undefined), Deferred.await(holdA)))
      )
      const b = yield* Effect.fork(
        p.use("b", () => Effect.zipRight(Deferred.succeed(inB, undefined), Deferred.await(holdB)))
      )
      yield* Deferred.await(inA)
      yield* Deferred.await(inB)
      const c = yield* Effect.fork(p.use("c", Effect.succeed))
      yield* Effect.sleep("20 millis")
      // Both resources are leased: c waits, nothing is closed under a lease.
      expect(opened).toEqual(["a", "b"])
      expect(closed).toEqual([])
      expect(c.unsafePoll()).toBeNull()
      yield* Deferred.succeed(holdB, undefined)
      expect(yield* Fiber.join(c)).toBe("C")
      expect(closed).toEqual(["b"])
      yield* Deferred.succeed(holdA, undefined)
      yield* Fiber.join(a)
      yield* Fiber.join(b)
      expect(yield* p.size).toBe(2)
    }))

  it.scopedLive("a waiter can be interrupted, and a forgotten key closes when its last lease ends", () =>
    Effect.gen(function*() {
      const { closed, pool: p } = yield* pool
      const hold = yield* Deferred.make<void>()
      const inA = yield* Deferred.make<void>()
      const a = yield* Effect.fork(
        p.use("a", () => Effect.zipRight(Deferred.succeed(inA, undefined), Deferred.await(hold)))
      )
      yield* Deferred.await(inA)
      yield* Effect.fork(p.use("b", () => Effect.never))
      yield* Effect.sleep("10 millis")
      // Full and leased: a third key's wait ends at its timeout.
      const timedOut = yield* p.use("c", Effect.succeed).pipe(Effect.timeout("30 millis"), Effect.either)
      expect(timedOut._tag).toBe("Left")
      yield* p.invalidate("a")
      expect(closed).toEqual([])
      yield* Deferred.succeed(hold, undefined)
      yield* Fiber.join(a)
      expect(closed).toEqual(["a"])
      // Its place is free: a new key opens at once.
      expect(yield* p.use("c", Effect.succeed)).toBe("C")
    }))

  it.scoped("a failed open leaves no entry and no lease behind", () =>
    Effect.gen(function*() {
      let attempts = 0
      const p = yield* LeasedPool.make({
        capacity: 1,
        identity: (key: string) => key,
        open: (key) => ++attempts === 1 ? Effect.fail(`no ${key}`) : Effect.succeed(key)
      })
      expect(yield* Effect.flip(p.use("a", Effect.succeed))).toBe("no a")
      expect(yield* p.size).toBe(0)
      expect(yield* p.use("b", Effect.succeed)).toBe("b")
    }))
})
