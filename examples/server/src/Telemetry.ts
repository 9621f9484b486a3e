/**
 * Traces and metrics over OTLP/HTTP (JSON), configured with the standard OpenTelemetry variables,
 * off when none is set (then the server builds no span at all: `Sightline.untraced`).
 *
 * | variable | meaning |
 * |---|---|
 * | `OTEL_EXPORTER_OTLP_ENDPOINT` | the collector's base URL; traces go to `<it>/v1/traces`, metrics to `<it>/v1/metrics` |
 * | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` | the traces (metrics) URL itself, instead |
 * | `OTEL_METRIC_EXPORT_INTERVAL` | milliseconds between metric exports (default 60000) |
 * | `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS` | `key=value,key=value` sent with each export (an API key) |
 * | `OTEL_SERVICE_NAME` | the service's name (default `sightline`) |
 * | `OTEL_BSP_SCHEDULE_DELAY` | milliseconds between exports (default 5000) |
 * | `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG` | which traces are kept (`Sampler`): `parentbased_always_on` by default; `parentbased_traceidratio` with `0.1` keeps a tenth |
 * | `OTEL_SDK_DISABLED` | `true` turns export off whatever else is set |
 *
 * @since 0.1.0
 */
import * as OtlpMetrics from "@effect/opentelemetry/OtlpMetrics"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as Sampler from "./Sampler.js"

/**
 * Where and how traces are exported.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The traces URL (`.../v1/traces`). */
  readonly tracesUrl: string
  /** The metrics URL (`.../v1/metrics`); none, no metrics are exported. */
  readonly metricsUrl?: string | undefined
  /** How often metrics are sent (default 60 s). */
  readonly metricsInterval?: Duration.DurationInput | undefined
  readonly serviceName: string
  /** Sent with each export; never logged. */
  readonly headers: Readonly<Record<string, string>>
  /** How often spans are sent (default 5 s). */
  readonly exportInterval?: Duration.DurationInput | undefined
  /** Which traces are kept (default: all that no caller marked unsampled). */
  readonly sampler?: Sampler.Sampler | undefined
}

// `key=value,key=value`, values percent-decoded, as the OpenTelemetry specification writes them.
const headersOf = (text: string): Record<string, string> =>
  Object.fromEntries(
    text.split(",").map((pair) => pair.trim()).filter((pair) => pair.includes("=")).map((pair) => {
      const at = pair.indexOf("=")
      return [pair.slice(0, at).trim(), decodeURIComponent(pair.slice(at + 1).trim())]
    })
  )

/**
 * The options from the environment; none when no endpoint is set or the SDK is disabled.
 *
 * @since 0.1.0
 * @category constants
 */
export const fromEnv: Config.Config<Option.Option<Options>> = Config.all({
  endpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT")),
  tracesEndpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
  metricsEndpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")),
  metricsMillis: Config.integer("OTEL_METRIC_EXPORT_INTERVAL").pipe(
    Config.validate({ message: "must be a positive number of milliseconds", validation: (n) => n > 0 }),
    Config.withDefault(60_000)
  ),
  headers: Config.string("OTEL_EXPORTER_OTLP_HEADERS").pipe(Config.withDefault("")),
  tracesHeaders: Config.string("OTEL_EXPORTER_OTLP_TRACES_HEADERS").pipe(Config.withDefault("")),
  serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("sightline")),
  disabled: Config.boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  sampler: Config.all({
    name: Config.string("OTEL_TRACES_SAMPLER").pipe(Config.withDefault("parentbased_always_on")),
    arg: Config.option(Config.string("OTEL_TRACES_SAMPLER_ARG"))
  }).pipe(Config.mapOrFail(({ arg, name }) => {
    const sampler = Sampler.fromNames(name, Option.getOrUndefined(arg))
    return sampler === undefined
      ? Either.left(ConfigError.InvalidData(
        ["OTEL_TRACES_SAMPLER"],
        "an OpenTelemetry sampler (always_on, always_off, traceidratio, or parentbased_ of one) with a ratio from 0 to 1"
      ))
      : Either.right(sampler)
  })),
  delayMillis: Config.integer("OTEL_BSP_SCHEDULE_DELAY").pipe(
    Config.validate({ message: "must be a positive number of milliseconds", validation: (n) => n > 0 }),
    Config.withDefault(5_000)
  )
}).pipe(Config.map((
  {
    delayMillis,
    disabled,
    endpoint,
    headers,
    metricsEndpoint,
    metricsMillis,
    sampler,
    serviceName,
    tracesEndpoint,
    tracesHeaders
  }
) => {
  if (disabled) return Option.none()
  const under = (signal: string) => Option.map(endpoint, (base) => `${base.replace(/\/+$/, "")}/v1/${signal}`)
  const url = Option.orElse(tracesEndpoint, () => under("traces"))
  const metricsUrl = Option.getOrUndefined(Option.orElse(metricsEndpoint, () => under("metrics")))
  return Option.map(url, (tracesUrl) => ({
    tracesUrl,
    metricsUrl,
    metricsInterval: Duration.millis(metricsMillis),
    sampler,
    serviceName,
    headers: { ...headersOf(headers), ...headersOf(tracesHeaders) },
    exportInterval: Duration.millis(delayMillis)
  }))
}))

/** A failure as a span records it: its kind and code, never its message. */
class RecordedFailure extends Error {
  constructor(error: unknown) {
    const e = typeof error === "object" && error !== null ? error as Record<string, unknown> : {}
    const kind = typeof e._tag === "string" ? e._tag : error instanceof Error ? error.name : typeof error
    const code = typeof e.sqlState === "string" ? e.sqlState : typeof e.code === "string" ? e.code : undefined
    super(code === undefined ? kind : `${kind} (${code})`)
    this.name = kind
    // The frames would be this constructor's, which say nothing of the failure.
    this.stack = `${kind}: ${this.message}`
  }
}

/**
 * The tracer, whose spans record a failure by its kind and code only (`InvalidRequest
 * (invalid_request)`, `QueryError (22P02)`): a failure's message can hold what a database said
 * about a row (`invalid input syntax for type integer: "…"`) or what a member wrote, and the
 * collector's readers may not see tenants' data. Defects keep their text: they are the server's own
 * faults, which its operators fix.
 *
 * @since 0.1.0
 * @category utils
 */
export const failuresWithoutText = (tracer: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span(name, parent, context, links, startTime, kind, options) {
      const span = tracer.span(name, parent, context, links, startTime, kind, options)
      const end = span.end.bind(span)
      span.end = (endTime, exit) =>
        end(
          endTime,
          Exit.isFailure(exit) ? Exit.failCause(Cause.map(exit.cause, (error) => new RecordedFailure(error))) : exit
        )
      return span
    },
    context: tracer.context
  })

/**
 * A tracer exporting every span of the process to the collector, and the process's metrics.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<never> => {
  const resource = { serviceName: options.serviceName, serviceVersion: "0.1.0" }
  return Layer.mergeAll(
    Layer.unwrapScoped(Effect.map(
      OtlpTracer.make({
        url: options.tracesUrl,
        resource,
        headers: options.headers,
        exportInterval: options.exportInterval ?? Duration.seconds(5)
      }),
      (tracer) =>
        Layer.setTracer(
          failuresWithoutText(options.sampler === undefined ? tracer : Sampler.sampled(tracer, options.sampler))
        )
    )),
    options.metricsUrl === undefined ? Layer.empty : OtlpMetrics.layer({
      url: options.metricsUrl,
      resource,
      headers: options.headers,
      exportInterval: options.metricsInterval ?? Duration.minutes(1)
    })
  ).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
}
