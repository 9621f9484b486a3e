import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Decision from "../src/Decision.js"
import { Conflict, InvalidRequest, NotFound, PermissionDenied, Unauthenticated } from "../src/Errors.js"

describe("Decision", () => {
  it.effect("enforce fails with the error of the denial's code and keeps its reason", () =>
    Effect.gen(function*() {
      const cases = [
        [Decision.deny("invalid_request", "bad"), InvalidRequest],
        [Decision.deny("permission_denied", "no"), PermissionDenied],
        [Decision.deny("conflict", "moved"), Conflict],
        [Decision.deny("unauthenticated", "who"), Unauthenticated]
      ] as const
      for (const [denial, ErrorClass] of cases) {
        const error = yield* Effect.flip(Decision.enforce(denial))
        expect(error).toBeInstanceOf(ErrorClass)
        expect(error.message).toBe(denial.reason)
      }
    }))

  it.effect("a not_found denial keeps the default message, so it never hints that the object exists", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Decision.enforce(Decision.deny("not_found", "no read authority on secret/x.sql"))
      )
      expect(error).toEqual(new NotFound())
    }))

  it.effect("allow succeeds, and all returns the first denial", () =>
    Effect.gen(function*() {
      yield* Decision.enforce(Decision.allow)
      const first = Decision.deny("permission_denied", "first")
      expect(Decision.all([Decision.allow, first, Decision.deny("not_found", "second")])).toBe(first)
      expect(Decision.all([Decision.allow, Decision.allow])).toEqual(Decision.allow)
    }))

  it("the error type is derived from the codes the decision can deny with", () => {
    const decide = (visible: boolean, live: boolean) =>
      !live
        ? Decision.deny("unauthenticated", "who")
        : visible
        ? Decision.allow
        : Decision.deny("not_found", "gone")
    const decision = decide(true, true)
    expectTypeOf(Decision.enforce(decision)).toEqualTypeOf<Effect.Effect<void, Unauthenticated | NotFound>>()
    expectTypeOf(Decision.all([decision, Decision.deny("conflict", "x")])).toEqualTypeOf<
      Decision.Decision<"unauthenticated" | "not_found" | "conflict">
    >()
  })
})
