/**
 * The id port: every new id comes from here, so tests can make ids deterministic.
 *
 * Time comes from Effect's own `Clock` (`DateTime.now`), which `@effect/vitest`'s TestClock
 * controls; Sightline has no clock port of its own.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"

/**
 * Generates UUIDs (v4 in production).
 *
 * @since 0.1.0
 * @category services
 */
export class IdGenerator extends Context.Tag("@sightline/core/IdGenerator")<
  IdGenerator,
  IdGenerator.Service
>() {}

export declare namespace IdGenerator {
  /** Generation of new ids. */
  export interface Service {
    /** A new lowercase UUID string. */
    readonly uuid: Effect.Effect<string>
  }
}

/**
 * A new UUID from the `IdGenerator` in context.
 *
 * @since 0.1.0
 * @category utils
 */
export const uuid: Effect.Effect<string, never, IdGenerator> = Effect.flatMap(IdGenerator, (g) => g.uuid)

// Core is compiled without DOM or Node typings (it must not reach for I/O), so the one Web Crypto
// function it needs is declared here.
const webCrypto = (globalThis as unknown as { readonly crypto: { randomUUID(): string } }).crypto

/**
 * UUID v4 from the platform's `crypto.randomUUID` (Node 20+, browsers, Deno, Bun).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<IdGenerator> = Layer.succeed(IdGenerator, {
  uuid: Effect.sync(() => webCrypto.randomUUID())
})

/**
 * Sequential, valid v4-shaped UUIDs (`00000000-0000-4000-8000-000000000001`, ...) for tests.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest: Layer.Layer<IdGenerator> = Layer.effect(
  IdGenerator,
  Effect.map(Ref.make(0), (counter) => ({
    uuid: Ref.updateAndGet(counter, (n) => n + 1).pipe(
      Effect.map((n) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`)
    )
  }))
)
