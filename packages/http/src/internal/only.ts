/**
 * Building a layer over only the services it names.
 *
 * `Layer.provide` hands a layer everything around it, and the platform keeps what a layer was built
 * with: the server runs every request fiber in the context `serve` was built in, and each
 * `HttpApiBuilder` group (and middleware added `withContext`) merges the context it was built in into
 * every request it handles. Assembled inside a whole deployment, that is every service of the process (82 in the
 * standalone server), copied again by every merge, `provideService` and span of every request (2.7 KB
 * a copy). Built over only what they read, those contexts hold a handful of services.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * `layer`, built in a context that holds only `tags` (those of them that are present: a tag the
 * layer reads with `Effect.serviceOption` may be absent). Its requirements must be among `tags`, so
 * the compiler says when a layer comes to need a service that is not named. Layers it shares with
 * the rest of the application are still built once (the same memo map).
 */
export const only =
  <const Tags extends ReadonlyArray<Context.Tag<any, any>>>(...tags: Tags) =>
  <A, E, R extends Context.Tag.Identifier<Tags[number]>>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
    Layer.scopedContext(
      Effect.gen(function*() {
        const memoMap = yield* Layer.CurrentMemoMap
        const scope = yield* Effect.scope
        const context = Context.pick(...tags)(yield* Effect.context<R>())
        // Replaces the context rather than merging into it (which `Effect.provide` would).
        return yield* Effect.mapInputContext(
          Layer.buildWithMemoMap(layer, memoMap, scope),
          (_: Context.Context<R>) => context
        )
      })
    )
