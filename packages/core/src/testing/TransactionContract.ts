/**
 * The contract of the `Transaction` port, the same for every adapter: a success commits, a failure,
 * a defect or an interruption rolls back everything, and a nested transaction is a savepoint (its
 * failure undoes its own writes only, and the outer transaction may catch it and commit the rest).
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { OrganizationRepo } from "../OrganizationRepo.js"
import { Transaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const exists = (id: string) =>
  Effect.flatMap(OrganizationRepo, (repo) => Effect.map(repo.get(id as never), Option.isSome))

/**
 * Registers the suite for an adapter (it writes organizations to tell what committed).
 *
 * @since 0.1.0
 * @category utils
 */
export const transactionContract = (
  name: string,
  layer: Layer.Layer<Transaction | OrganizationRepo, unknown>
): void => {
  describe(`Transaction contract: ${name}`, () => {
    it.effect("commits every write of a transaction that succeeds", () =>
      Effect.gen(function*() {
        const tx = yield* Transaction
        const [a, b] = yield* tx.withTransaction(Effect.all([Fixtures.organization("a"), Fixtures.organization("b")]))
        expect([yield* exists(a.id), yield* exists(b.id)]).toEqual([true, true])
      }).pipe(Effect.provide(layer)))

    it.effect("rolls back every write when it fails or dies", () =>
      Effect.gen(function*() {
        const tx = yield* Transaction
        let id = ""
        const failed = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
          id = (yield* Fixtures.organization("doomed")).id
          return yield* Effect.fail("no")
        })))
        expect(Exit.isFailure(failed)).toBe(true)
        expect(yield* exists(id)).toBe(false)
        const died = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
          id = (yield* Fixtures.organization("doomed")).id
          return yield* Effect.dieMessage("boom")
        })))
        expect(Exit.isFailure(died)).toBe(true)
        expect(yield* exists(id)).toBe(false)
      }).pipe(Effect.provide(layer)))

    it.live("rolls back when interrupted mid-transaction", () =>
      Effect.gen(function*() {
        const tx = yield* Transaction
        let id = ""
        const fiber = yield* Effect.fork(tx.withTransaction(Effect.gen(function*() {
          id = (yield* Fixtures.organization("interrupted")).id
          yield* Effect.never
        })))
        while (id === "") yield* Effect.sleep("5 millis")
        yield* Fiber.interrupt(fiber)
        expect(yield* exists(id)).toBe(false)
      }).pipe(Effect.provide(layer)))

    it.effect("a nested failure undoes its own writes only; the outer transaction catches it and commits", () =>
      Effect.gen(function*() {
        const tx = yield* Transaction
        let inner = ""
        const outer = yield* tx.withTransaction(Effect.gen(function*() {
          const kept = yield* Fixtures.organization("outer")
          yield* tx.withTransaction(Effect.gen(function*() {
            inner = (yield* Fixtures.organization("inner")).id
            return yield* Effect.fail("inner failed")
          })).pipe(Effect.ignore)
          return kept
        }))
        expect([yield* exists(outer.id), yield* exists(inner)]).toEqual([true, false])
      }).pipe(Effect.provide(layer)))

    it.effect("a nested success commits with the outer transaction, and rolls back with it", () =>
      Effect.gen(function*() {
        const tx = yield* Transaction
        let inner = ""
        const failed = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
          inner = (yield* tx.withTransaction(Fixtures.organization("inner"))).id
          return yield* Effect.fail("outer failed")
        })))
        expect(Exit.isFailure(failed)).toBe(true)
        expect(yield* exists(inner)).toBe(false)
      }).pipe(Effect.provide(layer)))
  })
}
