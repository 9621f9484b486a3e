/**
 * Which traces are kept, as the OpenTelemetry sampler variables say (`OTEL_TRACES_SAMPLER`,
 * `OTEL_TRACES_SAMPLER_ARG`): a tracer that starts a trace's root span sampled or not, and gives
 * every child its parent's decision, so a trace is kept whole or not at all. Unsampled spans are
 * still spans (the program runs the same), but nothing exports them.
 *
 * @since 0.1.0
 */
import type * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as NodeCrypto from "node:crypto"

/**
 * A sampler: every trace, none, or a ratio of the traces that start here; `parentBased` follows a
 * caller's decision (its `traceparent`) where there is one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Sampler {
  readonly ratio: number
  readonly parentBased: boolean
}

/**
 * The sampler of `OTEL_TRACES_SAMPLER` (`always_on`, `always_off`, `traceidratio`, and their
 * `parentbased_` forms, the default being `parentbased_always_on`) with `OTEL_TRACES_SAMPLER_ARG`
 * (the ratio, 1 by default); `undefined` for a name it does not know.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromNames = (name: string, arg: string | undefined): Sampler | undefined => {
  const parentBased = name.startsWith("parentbased_")
  const base = parentBased ? name.slice("parentbased_".length) : name
  const ratio = base === "always_on"
    ? 1
    : base === "always_off"
    ? 0
    : base === "traceidratio"
    ? Number(arg ?? "1")
    : NaN
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) return undefined
  return { ratio, parentBased }
}

const hex = (bytes: number) => NodeCrypto.randomBytes(bytes).toString("hex")

/** A span nothing exports: it keeps the trace's ids so that its children share its decision. */
class UnsampledSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId = hex(8)
  readonly traceId: string
  readonly sampled = false
  readonly attributes = new Map<string, unknown>()
  status: Tracer.SpanStatus
  links: Array<Tracer.SpanLink>
  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Tracer.Span["context"],
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    this.traceId = Option.match(parent, { onNone: () => hex(16), onSome: (span) => span.traceId })
    this.status = { _tag: "Started", startTime }
    this.links = [...links]
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(key: string, value: unknown): void {
    this.attributes.set(key, value)
  }
  event(): void {}
  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    this.links.push(...links)
  }
}

/**
 * `tracer`, keeping the traces `sampler` keeps.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sampled = (tracer: Tracer.Tracer, sampler: Sampler): Tracer.Tracer =>
  // Even keeping every trace, a caller's unsampled decision must hold: the exporter keeps all it gets.
  Tracer.make({
    span(name, parent, context, links, startTime, kind, options) {
      const keep = Option.match(parent, {
        // A root: the ratio decides.
        onNone: () => Math.random() < sampler.ratio,
        // A child of this process's span keeps its decision; a caller's, when parent-based.
        onSome: (span) => span._tag === "Span" || sampler.parentBased ? span.sampled : Math.random() < sampler.ratio
      })
      return keep
        ? tracer.span(name, parent, context, links, startTime, kind, options)
        : new UnsampledSpan(name, parent, context, links, startTime, kind)
    },
    context: tracer.context
  })
