/** Charts rendered to PNG without a browser, and a spec that tries to load data is refused. */
import { describe, expect, it } from "@effect/vitest"
import * as ChartSpec from "@sightline/core/ChartSpec"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as VegaLite from "vega-lite"
import * as VegaCharts from "../src/VegaCharts.js"

const pngSize = (png: Uint8Array) => {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  return { width: view.getUint32(16), height: view.getUint32(20) }
}

describe("VegaCharts", () => {
  it.effect("renders a chart the agent built to a PNG of the configured width", () =>
    Effect.gen(function*() {
      const spec = Either.getOrThrow(ChartSpec.build(
        { mark: "bar", x: "product", y: "revenue", title: "Revenue by product" },
        {
          columns: [{ name: "product", type: "text" }, { name: "revenue", type: "numeric" }],
          rows: [["Lamp", 120.5], ["Desk", 300], ["Chair", 80]]
        }
      ))
      const png = yield* VegaCharts.renderPng(spec, { widthPixels: 800 })
      expect([...png.slice(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
      expect(pngSize(png).width).toBe(800)
      expect(pngSize(png).height).toBeGreaterThan(100)
    }))

  it.effect("writes a ranking's long names out whole, and a measure's numbers in its format", () =>
    Effect.promise(async () => {
      const long = "Nimbus Ultra Wide Curved Monitor 34-inch Professional Edition"
      const spec = Either.getOrThrow(ChartSpec.build(
        { mark: "bar", x: "product", y: "share" },
        {
          columns: [{ name: "product", type: "text" }, { name: "share", type: "numeric" }],
          rows: [[long, 0.42], ["Desk", 0.31], ["Chair", 0.27]],
          formats: { share: "percent" }
        }
      ))
      // The SVG that the PNG is rasterized from: every label as drawn.
      const [vega, vegaLite] = await Promise.all([import("vega"), import("vega-lite")])
      const sized = { ...spec, width: 400 } as VegaLite.TopLevelSpec
      const view = new vega.View(vega.parse(vegaLite.compile(sized).spec), {
        renderer: "none"
      })
      const svg = await view.toSVG()
      view.finalize()
      expect(svg).toContain(long)
      expect(svg).not.toContain("…")
      expect(svg).toContain(">40%<")
    }))

  it.effect("breaks a time series' line where a period is missing, instead of joining across it", () =>
    Effect.promise(async () => {
      const spec = Either.getOrThrow(ChartSpec.build(
        { mark: "line", x: "month", y: "orders" },
        {
          columns: [{ name: "month", type: "date" }, { name: "orders", type: "bigint" }],
          rows: [["2025-01-01", 4], ["2025-02-01", 5], ["2025-04-01", 7], ["2025-05-01", 6]]
        }
      ))
      const [vega, vegaLite] = await Promise.all([import("vega"), import("vega-lite")])
      const sized = { ...spec, width: 400 } as VegaLite.TopLevelSpec
      const view = new vega.View(vega.parse(vegaLite.compile(sized).spec), { renderer: "none" })
      const svg = await view.toSVG()
      view.finalize()
      const line = /role-mark[^>]*>.*?<path[^>]* d="([^"]+)"/.exec(svg)?.[1] ?? ""
      // Two pieces: January to February, then April to May.
      expect(line.match(/M/g)).toHaveLength(2)
    }))

  it.effect("still draws a chart stored before specs were stamped Vega-Lite v6", () =>
    Effect.gen(function*() {
      const spec = Either.getOrThrow(ChartSpec.build(
        { mark: "line", x: "month", y: "revenue" },
        {
          columns: [{ name: "month", type: "date" }, { name: "revenue", type: "numeric" }],
          rows: [["2025-01-01", 10], ["2025-02-01", 12], ["2025-03-01", 9]]
        }
      ))
      expect(spec.$schema).toBe("https://vega.github.io/schema/vega-lite/v6.json")
      const png = yield* VegaCharts.renderPng({ ...spec, $schema: "https://vega.github.io/schema/vega-lite/v5.json" })
      expect(pngSize(png).height).toBeGreaterThan(100)
    }))

  it.effect("loads nothing: a spec with a data URL fails instead of fetching", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(VegaCharts.renderPng({
        data: { url: "http://127.0.0.1:9/secret.json" },
        mark: "bar",
        encoding: { x: { field: "a", type: "nominal" } }
      }))
      expect(error._tag).toBe("ChartRenderError")
      expect(error.message).toContain("charts load no data")
    }))
})
