/**
 * The spans of use cases and repositories, built only where spans are recorded.
 *
 * `Effect.fn(name)` captures a stack trace (an `Error`) on every call and runs its body inside a
 * span provided to the fiber's context, even when tracing is disabled and the span goes nowhere:
 * on `GET /v2/playbooks/{id}`, its two spans (`Playbooks.get`, `PlaybookRepoSql.getWithReports`)
 * cost 13–17% of the server's CPU per request (`bench:http`'s servers, alternating runs).
 *
 * `fn` decides once, where the use case is defined (in its layer's construction): under a fiber
 * whose tracer is enabled (the default, and any host that installs a tracer), it is
 * `Effect.fn(name)`, span and stack included; under one built with `Layer.setTracerEnabled(false)`
 * (the standalone server), it is `Effect.fnUntraced`, and a call costs nothing more than its body.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import type * as Tracer from "effect/Tracer"

/** Whether the fiber defining a use case records spans (outside any fiber: yes, as by default). */
const tracing = (): boolean =>
  Option.match(Fiber.getCurrentFiber(), {
    onNone: () => true,
    onSome: (fiber) => fiber.getFiberRef(FiberRef.currentTracerEnabled)
  })

/**
 * `Effect.fn(name, options)` where spans are recorded, `Effect.fnUntraced` where the defining
 * fiber's tracer is disabled: the same body and pipeables either way.
 *
 * @since 0.1.0
 */
export const fn = (name: string, options?: Tracer.SpanOptions): Effect.fn.Gen & Effect.fn.NonGen =>
  tracing() ? Effect.fn(name, options) : Effect.fnUntraced as unknown as Effect.fn.Gen & Effect.fn.NonGen
