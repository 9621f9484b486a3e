import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Traced from "../src/Traced.js"

// The span a body runs in, by name (`Effect.currentSpan` fails when there is none).
const spanName = Effect.map(Effect.option(Effect.currentSpan), Option.map((span) => span.name))

// A use case defined inside an effect, as a layer's construction defines it.
const define = Effect.sync(() =>
  Traced.fn("UseCase.method")(function*(n: number) {
    return { n, span: yield* spanName }
  })
)

describe("Traced", () => {
  it.effect("defined where spans are recorded, a call runs in its named span", () =>
    Effect.gen(function*() {
      const method = yield* define
      expect(yield* method(1)).toEqual({ n: 1, span: Option.some("UseCase.method") })
    }))

  it.effect("defined where the tracer is disabled, a call builds no span at all", () =>
    Effect.gen(function*() {
      const method = yield* define.pipe(Effect.withTracerEnabled(false))
      // Run with the tracer on: the choice was made where the method was defined.
      expect(yield* method(2)).toEqual({ n: 2, span: Option.none() })
      // `Effect.fn` under a disabled tracer still provides a (no-op) span: what `Traced.fn` saves.
      const plain = yield* Effect.sync(() =>
        Effect.fn("UseCase.plain")(function*() {
          return yield* Effect.option(Effect.currentSpan)
        })
      ).pipe(Effect.withTracerEnabled(false))
      expect(Option.isSome(yield* plain().pipe(Effect.withTracerEnabled(false)))).toBe(true)
    }))

  it.effect("defined untraced, a body that returns an effect runs with its pipeables, and a throw is a defect", () =>
    Effect.gen(function*() {
      const [method, throwing] = yield* Effect.sync(() =>
        [
          Traced.fn("UseCase.effect")(
            (a: number) => Effect.map(spanName, (span) => ({ a, span })),
            Effect.map(({ a, span }) => ({ a: a + 1, span }))
          ),
          Traced.fn("UseCase.throws")((_: number): Effect.Effect<number> => {
            throw new Error("boom")
          })
        ] as const
      ).pipe(Effect.withTracerEnabled(false))
      expect(method.length).toBe(1)
      expect(yield* method(1)).toEqual({ a: 2, span: Option.none() })
      const exit = yield* Effect.exit(throwing(1))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    }))

  it.effect("outside any fiber, a definition is traced, as by default", () =>
    Effect.gen(function*() {
      const method = Traced.fn("UseCase.outside")(function*() {
        return yield* spanName
      })
      expect(yield* method()).toEqual(Option.some("UseCase.outside"))
    }))

  it.effect("keeps the body's arity and its pipeables", () =>
    Effect.gen(function*() {
      const method = yield* Effect.sync(() =>
        Traced.fn("UseCase.piped")(
          function*(a: number, b: number) {
            return a + b
          },
          Effect.map((sum) => sum * 10)
        )
      ).pipe(Effect.withTracerEnabled(false))
      expect(method.length).toBe(2)
      expect(yield* method(1, 2)).toBe(30)
    }))
})
