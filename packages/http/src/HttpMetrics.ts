/**
 * Metrics of the HTTP server, and their exposition: requests by route and status with a latency
 * histogram (recorded only where the host turns request metrics on, since they run on every
 * request), and `GET /metrics`, the Prometheus text of every metric of the process (Effect's
 * registry: these and core's `Metrics`), for operators without a collector. `/metrics` is served
 * only where the host configures its token, which every scrape presents as a bearer token.
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as NodeCrypto from "node:crypto"
import type { Metric as PromMetric } from "prom-client"

/**
 * Whether the request fibers record request metrics (off: nothing is recorded per request).
 *
 * @since 0.1.0
 * @category constants
 */
export const currentEnabled: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/**
 * Turns request metrics on for the fibers forked under it (the server's).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEnabled: Layer.Layer<never> = Layer.locallyScoped(currentEnabled, true)

/**
 * Requests answered, by route and status.
 *
 * @since 0.1.0
 * @category constants
 */
export const requests = Metric.counter("http_server_requests_total", {
  description: "HTTP requests answered, by route and status",
  incremental: true
})

/**
 * The time to answer a request, in seconds, by route.
 *
 * @since 0.1.0
 * @category constants
 */
export const duration = Metric.histogram(
  "http_server_request_duration_seconds",
  MetricBoundaries.exponential({ start: 0.001, factor: 2, count: 15 }),
  "The time to answer an HTTP request, in seconds, by route"
)

/**
 * Event streams open in this process (`/v2/chats/stream` and its followers, resumed streams).
 *
 * @since 0.1.0
 * @category constants
 */
export const openStreams = Metric.gauge("sightline_sse_streams_open", {
  description: "Server-Sent Event streams open in this process"
})

/**
 * Counts an event stream from its opening to its close (a gauge the body's own events move, with no
 * fiber around them).
 *
 * @since 0.1.0
 * @category utils
 */
export const streamOpened = (onClose: (f: () => void) => void): void => {
  openStreams.unsafeModify(1, [])
  onClose(() => openStreams.unsafeModify(-1, []))
}

/**
 * A label of requests by route: the template of the route that answers a URL (`/v2/chats/:id`),
 * or `unmatched`. Only the server's own templates become labels, so no caller can make a series.
 *
 * @since 0.1.0
 * @category models
 */
export type RouteLabels = (url: string) => string

interface Template {
  readonly path: string
  readonly segments: ReadonlyArray<string>
  // How many segments are words of the route: where several templates match
  // (`/v2/members/me`, `/v2/members/:id`), the most literal one answers, as the router does.
  readonly literal: number
}

const matches = (template: Template, segments: ReadonlyArray<string>): boolean => {
  for (let i = 0; i < template.segments.length; i++) {
    const part = template.segments[i]!
    // `*` takes the rest of the path; `/svc.rpc.public.*` any segment that begins so, and the rest.
    if (part.endsWith("*")) return (segments.slice(i).join("/")).startsWith(part.slice(0, -1))
    const segment = segments[i]
    if (segment === undefined) return false
    if (part.startsWith(":") ? segment === "" : part !== segment) return false
  }
  return template.segments.length === segments.length
}

/**
 * The labels of the given route templates (the router's paths, in the router's syntax).
 *
 * @since 0.1.0
 * @category constructors
 */
export const routeLabels = (paths: Iterable<string>): RouteLabels => {
  const templates: Array<Template> = [...new Set(paths)].map((path) => {
    const segments = path.split("/")
    return { path, segments, literal: segments.filter((s) => !s.startsWith(":") && !s.includes("*")).length }
  }).sort((a, b) => b.literal - a.literal || b.segments.length - a.segments.length)
  return (url) => {
    const segments = (url.split("?")[0] ?? "").split("/")
    return templates.find((template) => matches(template, segments))?.path ?? "unmatched"
  }
}

// The labels of the router that serves this process's requests, made once per router.
const labelsByRouter = new WeakMap<object, RouteLabels>()

/**
 * The route label of a request, from the routes of the `HttpApiBuilder.Router` in context (the
 * API's endpoints and every route added beside them); `unmatched` without a router.
 *
 * @since 0.1.0
 * @category utils
 */
export const routeOf = (url: string): Effect.Effect<string> =>
  Effect.flatMap(Effect.serviceOption(HttpApiBuilder.Router), (service) =>
    Option.match(service, {
      onNone: () => Effect.succeed("unmatched"),
      onSome: (tag) =>
        Effect.map(tag.router, (router) => {
          let labels = labelsByRouter.get(router)
          if (labels === undefined) {
            labels = routeLabels([
              ...Chunk.toReadonlyArray(router.routes).map((route) => route.path),
              ...Chunk.toReadonlyArray(router.mounts).map(([path]) => `${path}/*`)
            ])
            labelsByRouter.set(router, labels)
          }
          return labels(url)
        })
    }))

/**
 * Records one answered request, labelled by its route's template.
 *
 * @since 0.1.0
 * @category utils
 */
export const record = (url: string, status: number, seconds: number): Effect.Effect<void> =>
  Effect.flatMap(routeOf(url), (route) =>
    Effect.zipRight(
      Metric.increment(Metric.tagged(Metric.tagged(requests, "route", route), "status", String(status))),
      Metric.update(Metric.tagged(duration, "route", route), seconds)
    ))

// Prometheus names: letters, digits, `_` and `:`.
const nameOf = (name: string) => name.replace(/[^a-zA-Z0-9_:]/g, "_")
const labelsOf = (pair: MetricPair.MetricPair.Untyped, extra: ReadonlyArray<readonly [string, string]> = []) =>
  Object.fromEntries([...pair.metricKey.tags.map((tag) => [nameOf(tag.key), tag.value] as const), ...extra])
const number = (value: number | bigint) => typeof value === "bigint" ? Number(value) : value
const boundary = (value: number) => Number.isFinite(value) ? String(value) : value > 0 ? "+Inf" : "-Inf"

/** One family of the exposition, as prom-client's registry reads a metric (`get`). */
interface Family {
  readonly name: string
  readonly help: string
  readonly type: "counter" | "gauge" | "histogram"
  readonly aggregator: "sum"
  readonly values: Array<{ value: number; labels: Record<string, string>; metricName?: string }>
}

/**
 * The Prometheus text exposition (version 0.0.4) of metric pairs: counters, gauges and histograms
 * (frequencies and summaries are left out), written by prom-client's registry from a snapshot of
 * Effect's metrics, so that the format (escaping, `+Inf`, families) is a maintained writer's.
 *
 * @since 0.1.0
 * @category utils
 */
export const prometheusText = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): Effect.Effect<string> =>
  Effect.promise(async () => {
    // A CommonJS module: where it is bundled, its exports are the namespace's default.
    const loaded = await import("prom-client")
    const { Registry } = typeof loaded.Registry === "function"
      ? loaded
      : (loaded as unknown as { readonly default: typeof loaded }).default
    const families = new Map<string, Family>()
    for (const pair of pairs) {
      const name = nameOf(pair.metricKey.name)
      const state: unknown = pair.metricState
      const type = MetricState.isCounterState(state)
        ? "counter"
        : MetricState.isGaugeState(state)
        ? "gauge"
        : MetricState.isHistogramState(state)
        ? "histogram"
        : undefined
      if (type === undefined) continue
      const family = families.get(name) ??
        { name, help: Option.getOrElse(pair.metricKey.description, () => name), type, aggregator: "sum", values: [] }
      families.set(name, family)
      if (MetricState.isCounterState(state) || MetricState.isGaugeState(state)) {
        family.values.push({
          value: number(MetricState.isCounterState(state) ? state.count : state.value),
          labels: labelsOf(pair)
        })
      } else if (MetricState.isHistogramState(state)) {
        const bucket = (le: string, value: number) =>
          family.values.push({ value, labels: labelsOf(pair, [["le", le]]), metricName: `${name}_bucket` })
        for (const [edge, count] of state.buckets) bucket(boundary(edge), count)
        if (!state.buckets.some(([edge]) => edge === Number.POSITIVE_INFINITY)) bucket("+Inf", state.count)
        family.values.push({ value: state.sum, labels: labelsOf(pair), metricName: `${name}_sum` })
        family.values.push({ value: state.count, labels: labelsOf(pair), metricName: `${name}_count` })
      }
    }
    const registry = new Registry()
    for (const family of [...families.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      // A metric as the registry reads it: its `get` gives the family's values, already counted.
      registry.registerMetric({ ...family, get: () => Promise.resolve(family) } as unknown as PromMetric<string>)
    }
    return registry.metrics()
  })

/**
 * The scrape token of `GET /metrics`; the route is served only where it is provided.
 *
 * @since 0.1.0
 * @category services
 */
export class MetricsToken extends Context.Tag("@sightline/http/HttpMetrics/MetricsToken")<
  MetricsToken,
  Redacted.Redacted<string>
>() {}

const sameSecret = (presented: string, expected: string) => {
  const a = NodeCrypto.createHash("sha256").update(presented).digest()
  const b = NodeCrypto.createHash("sha256").update(expected).digest()
  return NodeCrypto.timingSafeEqual(a, b)
}

/**
 * `GET /metrics` (nothing where `MetricsToken` is absent).
 *
 * @since 0.1.0
 * @category layers
 */
export const route: Layer.Layer<never> = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const token = yield* Effect.serviceOption(MetricsToken)
    if (Option.isNone(token)) return
    const expected = Redacted.value(token.value)
    yield* router.get(
      "/metrics",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const presented = /^Bearer[ \t]+(.+)$/i.exec(request.headers["authorization"] ?? "")?.[1]?.trim()
        if (presented === undefined || !sameSecret(presented, expected)) {
          return HttpServerResponse.text("metrics: send Authorization: Bearer <the metrics token>\n", {
            status: 401,
            headers: { "www-authenticate": "Bearer realm=\"metrics\"" }
          })
        }
        return HttpServerResponse.text(yield* prometheusText(yield* Metric.snapshot), {
          contentType: "text/plain; version=0.0.4; charset=utf-8",
          headers: { "cache-control": "no-store" }
        })
      })
    )
  })
)
