import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as IdGenerator from "../src/IdGenerator.js"
import { OrganizationId } from "../src/Ids.js"
import { JobQueue, layerMemory } from "../src/JobQueue.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { jobQueueContract } from "../src/testing/JobQueueContract.js"
import * as Transaction from "../src/Transaction.js"

const memory = Layer.mergeAll(layerMemory, OrganizationRepo.layerMemory).pipe(
  Layer.provide(IdGenerator.layerTest),
  Layer.provideMerge(Transaction.layerMemory)
)

jobQueueContract("layerMemory", memory)

const organizationId = OrganizationId.make("6f9619ff-8b86-4d11-b42d-00c04fc964ff")

describe("JobQueue.layerMemory", () => {
  it.effect("rolls an enqueue back with its transaction", () =>
    Effect.gen(function*() {
      const queue = yield* JobQueue
      const exit = yield* Effect.exit(Transaction.withTransaction(Effect.gen(function*() {
        yield* queue.enqueue({ organizationId, kind: "k", payload: null })
        return yield* Effect.fail("boom")
      })))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* queue.claim({ workerId: "w", kinds: ["k"], leaseMillis: 1_000 })).toEqual(Option.none())
    }).pipe(Effect.provide(memory)))

  it.effect("times leases and run_at on Effect's clock", () =>
    Effect.gen(function*() {
      const queue = yield* JobQueue
      const claim = (workerId: string) => queue.claim({ workerId, kinds: ["k"], leaseMillis: 30_000 })
      const runAt = DateTime.add(yield* DateTime.now, { seconds: 10 })
      const job = yield* queue.enqueue({ organizationId, kind: "k", payload: 1, runAt })
      yield* TestClock.adjust("9999 millis")
      expect(yield* claim("a")).toEqual(Option.none())
      yield* TestClock.adjust("1 millis")
      const first = yield* claim("a")
      expect(Option.map(first, (j) => j.locked_until)).toEqual(Option.some(DateTime.add(runAt, { seconds: 30 })))
      yield* TestClock.adjust("29999 millis")
      expect(yield* claim("b")).toEqual(Option.none())
      yield* TestClock.adjust("1 millis")
      expect(Option.map(yield* claim("b"), (j) => [j.id, j.locked_by])).toEqual(Option.some([job.id, "b"]))
    }).pipe(Effect.provide(memory)))

  it.effect("dies on a job the schema rejects (empty kind, zero attempts)", () =>
    Effect.gen(function*() {
      const queue = yield* JobQueue
      const dies = (exit: Exit.Exit<unknown>) => Exit.isFailure(exit) && Cause.isDie(exit.cause)
      expect(dies(yield* Effect.exit(queue.enqueue({ organizationId, kind: " ", payload: null })))).toBe(true)
      expect(dies(yield* Effect.exit(queue.enqueue({ organizationId, kind: "k", payload: null, maxAttempts: 0 }))))
        .toBe(true)
    }).pipe(Effect.provide(memory)))
})
