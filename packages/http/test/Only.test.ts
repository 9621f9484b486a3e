import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { only } from "../src/internal/only.js"

class A extends Context.Tag("test/A")<A, string>() {}
class B extends Context.Tag("test/B")<B, string>() {}
class Optional extends Context.Tag("test/Optional")<Optional, string>() {}
class Seen extends Context.Tag("test/Seen")<Seen, ReadonlyArray<string>>() {}

// A layer that keeps what it was built with, as `HttpApiBuilder.group` does.
const capturing: Layer.Layer<Seen, never, A> = Layer.effect(
  Seen,
  Effect.map(Effect.context<A>(), (context) => [...context.unsafeMap.keys()].filter((key) => key.startsWith("test/")))
)

const around = Layer.mergeAll(Layer.succeed(A, "a"), Layer.succeed(B, "b"), Layer.succeed(Optional, "o"))

describe("only", () => {
  it.effect("builds a layer over only the services it names, of those present", () =>
    Effect.gen(function*() {
      expect(yield* Seen.pipe(Effect.provide(capturing.pipe(Layer.provide(around))))).toEqual([
        "test/A",
        "test/B",
        "test/Optional"
      ])
      expect(yield* Seen.pipe(Effect.provide(capturing.pipe(only(A, Optional), Layer.provide(around))))).toEqual([
        "test/A",
        "test/Optional"
      ])
      // A named service that is absent is left out, not an error.
      const withoutOptional = Layer.merge(Layer.succeed(A, "a"), Layer.succeed(B, "b"))
      expect(yield* Seen.pipe(Effect.provide(capturing.pipe(only(A, Optional), Layer.provide(withoutOptional)))))
        .toEqual(["test/A"])
    }))

  it.effect("a layer shared with the rest of the application is still built once", () =>
    Effect.gen(function*() {
      let builds = 0
      const shared = Layer.effect(A, Effect.sync(() => `a${++builds}`))
      const first = Layer.effect(B, A).pipe(Layer.provide(shared), only())
      const second = Layer.effect(Optional, A).pipe(Layer.provide(shared))
      const [b, o] = yield* Effect.all([B, Optional]).pipe(Effect.provide(Layer.merge(first, second)))
      expect([b, o, builds]).toEqual(["a1", "a1", 1])
    }))

  it.effect("its resources are released with the application", () =>
    Effect.gen(function*() {
      const released: Array<string> = []
      const resource = Layer.scoped(
        A,
        Effect.acquireRelease(Effect.succeed("a"), () => Effect.sync(() => released.push("a")))
      )
      yield* A.pipe(Effect.provide(resource.pipe(only())))
      expect(released).toEqual(["a"])
    }))
})
