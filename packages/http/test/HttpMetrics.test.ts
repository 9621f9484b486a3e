import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as HttpMetrics from "../src/HttpMetrics.js"

describe("HttpMetrics", () => {
  it("labels a request by its route, never by its ids, paths or unmatched URLs", () => {
    expect(HttpMetrics.routeOf("/v2/chats?limit=5", 200)).toBe("/v2/chats")
    expect(HttpMetrics.routeOf("/v2/chats/3f1c7c52-2f0e-4f6e-9a51-2b8d7f0e9f11/messages", 200))
      .toBe("/v2/chats/:id/messages")
    expect(HttpMetrics.routeOf("/v2/connectors/12/semantic-model", 200)).toBe("/v2/connectors/:id/semantic-model")
    expect(HttpMetrics.routeOf("/v2/sandcastles/0b9e6a43-1c1e-4d7a-9a55-6c0e0f3b1a22/files/data/out.csv", 200)).toBe(
      "/v2/sandcastles/:id/files/:path"
    )
    expect(HttpMetrics.routeOf("/v2/anything-at-all", 404)).toBe("unmatched")
  })

  it.effect("writes counters, gauges and cumulative histograms as Prometheus text", () =>
    Effect.gen(function*() {
      const name = `test_${Math.random().toString(36).slice(2)}`
      const counter = Metric.counter(`${name}_total`, { description: "Things\ncounted", incremental: true })
      yield* Metric.incrementBy(Metric.tagged(counter, "kind", "a \"quoted\" one"), 3)
      const gauge = Metric.gauge(`${name}.gauge`)
      yield* Metric.set(gauge, 7)
      const histogram = Metric.histogram(`${name}_seconds`, MetricBoundaries.fromIterable([0.1, 1]))
      for (const value of [0.05, 0.5, 0.7, 5]) yield* Metric.update(histogram, value)
      const text = HttpMetrics.prometheusText(yield* Metric.snapshot)
      expect(text).toContain(`# HELP ${name}_total Things counted\n# TYPE ${name}_total counter\n`)
      expect(text).toContain(`${name}_total{kind="a \\"quoted\\" one"} 3\n`)
      expect(text).toContain(`# TYPE ${name}_gauge gauge\n${name}_gauge 7\n`)
      expect(text).toContain(`${name}_seconds_bucket{le="0.1"} 1\n`)
      expect(text).toContain(`${name}_seconds_bucket{le="1"} 3\n`)
      expect(text).toContain(`${name}_seconds_bucket{le="+Inf"} 4\n`)
      expect(text).toContain(`${name}_seconds_sum 6.25\n${name}_seconds_count 4\n`)
    }))
})
