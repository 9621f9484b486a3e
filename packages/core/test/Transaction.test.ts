import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { transactionContract } from "../src/testing/TransactionContract.js"
import { layerMemory, MemoryState, Transaction, withTransaction } from "../src/Transaction.js"

describe("Transaction.layerMemory", () => {
  it.effect("commits every write of a successful transaction", () =>
    Effect.gen(function*() {
      const state = yield* MemoryState
      const table = yield* state.table(0)
      yield* withTransaction(Ref.set(table, 1).pipe(Effect.zipRight(Ref.update(table, (n) => n + 1))))
      expect(yield* Ref.get(table)).toBe(2)
    }).pipe(Effect.provide(layerMemory)))

  it.effect("restores every table when the transaction fails", () =>
    Effect.gen(function*() {
      const state = yield* MemoryState
      const a = yield* state.table("a")
      const b = yield* state.table(["b"])
      const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
        yield* Ref.set(a, "changed")
        yield* Ref.set(b, ["changed"])
        return yield* Effect.fail("boom")
      })))
      expect(exit._tag).toBe("Failure")
      expect(yield* Ref.get(a)).toBe("a")
      expect(yield* Ref.get(b)).toEqual(["b"])
    }).pipe(Effect.provide(layerMemory)))

  it.effect("nested transactions join the outer one and roll back with it", () =>
    Effect.gen(function*() {
      const state = yield* MemoryState
      const tx = yield* Transaction
      const a = yield* state.table(0)
      const exit = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
        yield* tx.withTransaction(Ref.set(a, 5))
        yield* state.run(Ref.update(a, (n) => n + 1))
        return yield* Effect.fail("boom")
      })))
      expect(exit._tag).toBe("Failure")
      expect(yield* Ref.get(a)).toBe(0)
    }).pipe(Effect.provide(layerMemory)))

  it.live("serializes concurrent read-modify-write operations", () =>
    Effect.gen(function*() {
      const state = yield* MemoryState
      const counter = yield* state.table(0)
      const increment = state.run(Effect.gen(function*() {
        const n = yield* Ref.get(counter)
        yield* Effect.yieldNow()
        yield* Ref.set(counter, n + 1)
      }))
      yield* Effect.all(Array.from({ length: 50 }, () => increment), { concurrency: "unbounded" })
      expect(yield* Ref.get(counter)).toBe(50)
    }).pipe(Effect.provide(layerMemory)))
})

transactionContract("layerMemory", OrganizationRepo.layerMemory.pipe(Layer.provideMerge(layerMemory)))
