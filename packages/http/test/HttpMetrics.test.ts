import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as HttpMetrics from "../src/HttpMetrics.js"

describe("HttpMetrics", () => {
  it("labels a request by its route's template, never by its ids, paths or unmatched URLs", () => {
    const label = HttpMetrics.routeLabels([
      "/v2/chats",
      "/v2/chats/:id",
      "/v2/chats/:id/cells/:cellId",
      "/v2/members/me",
      "/v2/members/:id",
      "/v2/sandcastles/:id/files/*",
      "/rpc/public/*",
      "/svc.rpc.public.*",
      "/mcp"
    ])
    expect(label("/v2/chats?limit=5")).toBe("/v2/chats")
    expect(label("/v2/chats/3f1c7c52-2f0e-4f6e-9a51-2b8d7f0e9f11")).toBe("/v2/chats/:id")
    expect(label("/v2/chats/3f1c/cells/9a51")).toBe("/v2/chats/:id/cells/:cellId")
    expect(label("/v2/members/me")).toBe("/v2/members/me")
    expect(label("/v2/members/12")).toBe("/v2/members/:id")
    expect(label("/v2/sandcastles/0b9e/files/data/out.csv")).toBe("/v2/sandcastles/:id/files/*")
    expect(label("/rpc/public/svc.anything.NoSuchService/Whatever")).toBe("/rpc/public/*")
    expect(label("/svc.rpc.public.app.AppService/GetApp")).toBe("/svc.rpc.public.*")
    // Words a caller chose are never a label: lowercase segments included.
    for (const url of ["/v2/anything-at-all", "/v2/chats/a/b/c/d", "/aaaa/bbbb", "/v2", "/", "/mcpx"]) {
      expect([url, label(url)]).toEqual([url, "unmatched"])
    }
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
      const text = yield* HttpMetrics.prometheusText(yield* Metric.snapshot)
      // A new line in the help is written as the format escapes it.
      expect(text).toContain(`# HELP ${name}_total Things\\ncounted\n# TYPE ${name}_total counter\n`)
      expect(text).toContain(`${name}_total{kind="a \\"quoted\\" one"} 3\n`)
      expect(text).toContain(`# TYPE ${name}_gauge gauge\n${name}_gauge 7\n`)
      expect(text).toContain(`${name}_seconds_bucket{le="0.1"} 1\n`)
      expect(text).toContain(`${name}_seconds_bucket{le="1"} 3\n`)
      expect(text).toContain(`${name}_seconds_bucket{le="+Inf"} 4\n`)
      expect(text).toContain(`${name}_seconds_sum 6.25\n${name}_seconds_count 4\n`)
    }))
})
