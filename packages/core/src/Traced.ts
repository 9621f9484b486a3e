/**
 * The spans of use cases and repositories, built only where spans are recorded.
 *
 * `Effect.fn(name)` captures a stack trace (an `Error`) on every call and runs its body inside a
 * span provided to the fiber's context, even when tracing is disabled and the span goes nowhere:
 * on `GET /v2/playbooks/{id}`, the spans of the use case and the repository on its path cost 26% of
 * the server's CPU per request (`bench:http`'s servers, pinned alternating runs).
 *
 * `fn` decides once, where the use case is defined (in its layer's construction): under a fiber
 * whose tracer is enabled (the default, and any host that installs a tracer), it is
 * `Effect.fn(name)` (without its stack trace) for every call in a trace that is kept, and the plain
 * body for a call in a trace a sampler dropped; under one built with `Layer.setTracerEnabled(false)`
 * (the standalone server without telemetry), it is `Effect.fnUntraced` (or, for a body that
 * returns an effect rather than a generator, that body), and a call costs nothing more than its
 * body.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { isGeneratorFunction } from "effect/Utils"

/** Whether the fiber defining a use case records spans (outside any fiber: yes, as by default). */
const tracing = (): boolean =>
  Option.match(Fiber.getCurrentFiber(), {
    onNone: () => true,
    onSome: (fiber) => fiber.getFiberRef(FiberRef.currentTracerEnabled)
  })

type Body = (...args: Array<any>) => any

/**
 * `Effect.fnUntraced` for a generator body; for a body that returns an effect (which
 * `Effect.fnUntraced` does not take), the body with its pipeables, a throw being a defect as in
 * `Effect.fn`.
 */
const untraced = (body: Body, ...pipeables: Array<any>) => {
  if (isGeneratorFunction(body)) {
    return (Effect.fnUntraced as (body: Body, ...pipeables: Array<any>) => Body)(body, ...pipeables)
  }
  const call = function(this: unknown, ...args: Array<unknown>) {
    let effect: Effect.Effect<unknown, unknown, unknown>
    try {
      effect = body.apply(this, args)
    } catch (defect) {
      return Effect.die(defect)
    }
    for (const pipeable of pipeables) effect = pipeable(effect, ...args)
    return effect
  }
  return Object.defineProperty(call, "length", { value: body.length, configurable: true })
}

/**
 * `Effect.fn(name, options)` where spans are recorded, `Effect.fnUntraced` where the defining
 * fiber's tracer is disabled: the same body and pipeables either way.
 *
 * @since 0.1.0
 * @category utils
 */
export const fn = (name: string, options?: Tracer.SpanOptions): Effect.fn.Gen & Effect.fn.NonGen =>
  (tracing() ? sampledOnly(name, options) : untraced) as unknown as Effect.fn.Gen & Effect.fn.NonGen

/**
 * `Effect.fn(name)` for a call inside a trace that is kept, the plain body for a call inside one
 * that is dropped (a sampler said no, or a caller's `traceparent` did): a dropped trace's spans
 * would be built, timed and thrown away, so a request outside the sample costs what an untraced
 * one does. A call outside any span starts a trace, and the tracer's sampler decides. No stack
 * trace is captured (`Effect.fn` makes an `Error` per call for it).
 */
const sampledOnly = (name: string, options?: Tracer.SpanOptions) => (body: Body, ...pipeables: Array<any>) => {
  const traced = (Effect.fn as any)(name, { ...options, captureStackTrace: false })(body, ...pipeables) as Body
  const plain = untraced(body, ...pipeables)
  const call = function(this: unknown, ...args: Array<unknown>) {
    return Effect.withFiberRuntime((fiber) => {
      const span = fiber.currentSpan
      return (span !== undefined && !span.sampled ? plain : traced).apply(this, args)
    })
  }
  return Object.defineProperty(call, "length", { value: body.length, configurable: true })
}

/**
 * The W3C `traceparent` of the current span when it is exported (sampled, with real ids), or
 * `undefined`: what a model provider is told, and what a queued job keeps of whatever queued it.
 *
 * @since 0.1.0
 * @category utils
 */
export const traceparent: Effect.Effect<string | undefined> = Effect.map(
  Effect.option(Effect.currentSpan),
  (span) =>
    Option.isSome(span) && span.value.sampled && /^[0-9a-f]{32}$/.test(span.value.traceId) &&
      /^[0-9a-f]{16}$/.test(span.value.spanId)
      ? `00-${span.value.traceId}-${span.value.spanId}-01`
      : undefined
)

/**
 * A `traceparent` as a span to link to, or `undefined` when it is not one.
 *
 * @since 0.1.0
 * @category utils
 */
export const spanOfTraceparent = (text: string | undefined): Tracer.ExternalSpan | undefined => {
  const match = text === undefined ? null : /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(text)
  return match === null ? undefined : Tracer.externalSpan({
    traceId: match[1]!,
    spanId: match[2]!,
    sampled: (parseInt(match[3]!, 16) & 1) === 1
  })
}
