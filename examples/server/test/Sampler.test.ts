import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as Sampler from "../src/Sampler.js"

/** A tracer that records the spans it is asked to start (the exporter's side of the wrapper). */
const recording = () => {
  const started: Array<string> = []
  let id = 0
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      started.push(name)
      const traceId = Option.match(parent, { onNone: () => "a".repeat(32), onSome: (p) => p.traceId })
      return {
        _tag: "Span",
        name,
        spanId: (++id).toString(16).padStart(16, "0"),
        traceId,
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes: new Map(),
        links,
        sampled: true,
        kind,
        end: () => {},
        attribute: () => {},
        event: () => {},
        addLinks: () => {}
      }
    },
    context: (f) => f()
  })
  return { started, tracer }
}

const trace = (tracer: Tracer.Tracer, parent?: Tracer.ExternalSpan) =>
  Effect.gen(function*() {
    const child = yield* Effect.currentSpan.pipe(Effect.withSpan("child"))
    return child
  }).pipe(
    Effect.withSpan("root", parent === undefined ? { root: true } : { parent }),
    Effect.withTracer(tracer)
  )

const caller = (sampled: boolean) => Tracer.externalSpan({ traceId: "b".repeat(32), spanId: "c".repeat(16), sampled })

describe("Sampler", () => {
  it("reads the OpenTelemetry sampler names", () => {
    expect(Sampler.fromNames("parentbased_always_on", undefined)).toEqual({ ratio: 1, parentBased: true })
    expect(Sampler.fromNames("always_off", undefined)).toEqual({ ratio: 0, parentBased: false })
    expect(Sampler.fromNames("parentbased_traceidratio", "0.25")).toEqual({ ratio: 0.25, parentBased: true })
    expect(Sampler.fromNames("traceidratio", "2")).toBeUndefined()
    expect(Sampler.fromNames("jaeger_remote", undefined)).toBeUndefined()
  })

  it.effect("keeps or drops a whole trace, and follows a caller's decision where parent-based", () =>
    Effect.gen(function*() {
      const none = recording()
      const child = yield* trace(Sampler.sampled(none.tracer, { ratio: 0, parentBased: true }))
      expect(none.started).toEqual([])
      expect(child.sampled).toBe(false)

      const all = recording()
      yield* trace(Sampler.sampled(all.tracer, { ratio: 1, parentBased: false }))
      expect(all.started).toEqual(["root", "child"])

      // A caller that did not sample: the trace is dropped, its ids kept.
      const unsampledCaller = recording()
      const kept = yield* trace(Sampler.sampled(unsampledCaller.tracer, { ratio: 1, parentBased: true }), caller(false))
      expect(unsampledCaller.started).toEqual([])
      expect(kept.traceId).toBe("b".repeat(32))
      // A caller that sampled, under a sampler that keeps none of its own roots.
      const sampledCaller = recording()
      yield* trace(Sampler.sampled(sampledCaller.tracer, { ratio: 0, parentBased: true }), caller(true))
      expect(sampledCaller.started).toEqual(["root", "child"])
    }))
})
