import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ChartSpec from "../src/ChartSpec.js"

describe("ChartSpec.build", () => {
  const ranked = {
    columns: [{ name: "product", type: "text" }, { name: "revenue", type: "numeric" }],
    rows: [["Vista", 30], ["Alto", 20], ["Nimbus", 10]]
  }

  it("draws a ranking as bars lying down, its names whole and in its order, not the alphabet's", () => {
    const spec = Either.getOrThrow(ChartSpec.build({ mark: "bar", x: "product", y: "revenue" }, ranked))
    expect(spec.encoding.y).toEqual({ field: "product", type: "nominal", sort: null, axis: { labelLimit: 0 } })
    expect(spec.encoding.x).toEqual({ field: "revenue", type: "quantitative" })
    expect(spec.data.values.map((row) => row.product)).toEqual(["Vista", "Alto", "Nimbus"])
    // Bars over time stand, in the series' order.
    const monthly = {
      columns: [{ name: "month", type: "date" }, { name: "revenue", type: "numeric" }],
      rows: [["2025-01-01", 4], ["2025-02-01", 5]]
    }
    const standing = Either.getOrThrow(ChartSpec.build({ mark: "bar", x: "month", y: "revenue" }, monthly))
    expect(standing.encoding.x).toEqual({ field: "month", type: "nominal", sort: null })
    expect(standing.encoding.y).toEqual({ field: "revenue", type: "quantitative" })
  })

  it("writes a measure's numbers in its format, on the axis and on hover", () => {
    const share = {
      columns: [{ name: "region", type: "text" }, { name: "revenue_share", type: "numeric" }],
      rows: [["Europe", 0.42], ["Asia", 0.31]],
      formats: { revenue_share: "percent" as const }
    }
    const bars = Either.getOrThrow(ChartSpec.build({ mark: "bar", x: "region", y: "revenue_share" }, share))
    expect(bars.encoding.x).toEqual({ field: "revenue_share", type: "quantitative", axis: { format: ".0%" } })
    expect(bars.encoding.tooltip).toEqual([
      { field: "region", type: "nominal" },
      { field: "revenue_share", type: "quantitative", format: ".1%" }
    ])
    const money = {
      columns: [{ name: "month", type: "date" }, { name: "revenue", type: "numeric" }],
      rows: [["2025-01-01", 1234567.891]],
      formats: { revenue: "currency" as const }
    }
    const line = Either.getOrThrow(ChartSpec.build({ mark: "line", x: "month", y: "revenue" }, money))
    expect(line.encoding.y).toEqual({ field: "revenue", type: "quantitative", axis: { format: ".3~s" } })
    expect(line.encoding.tooltip).toEqual([
      { field: "month", type: "temporal" },
      { field: "revenue", type: "quantitative", format: ",.2f" }
    ])
    // A unit names the measure on its axis and on hover, in its format or without one.
    const dollars = Either.getOrThrow(
      ChartSpec.build({ mark: "line", x: "month", y: "revenue" }, { ...money, units: { revenue: "USD" } })
    )
    expect(dollars.encoding.y).toEqual({
      field: "revenue",
      type: "quantitative",
      title: "revenue (USD)",
      axis: { format: ".3~s" }
    })
    expect(dollars.encoding.tooltip).toEqual([
      { field: "month", type: "temporal" },
      { field: "revenue", type: "quantitative", title: "revenue (USD)", format: ",.2f" }
    ])
    const { formats: _, ...unformatted } = money
    const units = Either.getOrThrow(
      ChartSpec.build({ mark: "line", x: "month", y: "revenue" }, { ...unformatted, units: { revenue: "units" } })
    )
    expect(units.encoding.y).toEqual({ field: "revenue", type: "quantitative", title: "revenue (units)" })
    expect(units.encoding.tooltip).toEqual([
      { field: "month", type: "temporal" },
      { field: "revenue", type: "quantitative", title: "revenue (units)" }
    ])
    // Without a model's format, the numbers are Vega-Lite's own, and hovering shows every field.
    expect(
      Either.getOrThrow(ChartSpec.build({ mark: "line", x: "month", y: "revenue" }, { ...money, formats: {} }))
        .encoding.tooltip
    ).toBeUndefined()
  })

  it("types a line's x by its column, and refuses a y that is not numeric", () => {
    const series = {
      columns: [{ name: "month", type: "timestamptz" }, { name: "orders", type: "bigint" }],
      rows: [["2025-01-01", 4], ["2025-02-01", 5]]
    }
    const line = Either.getOrThrow(ChartSpec.build({ mark: "line", x: "month", y: "orders" }, series))
    expect(line.encoding.x).toEqual({ field: "month", type: "temporal" })
    expect(ChartSpec.build({ mark: "bar", x: "revenue", y: "product" }, ranked))
      .toEqual(Either.left("column product is not numeric: it cannot size the marks"))
  })
})

describe("ChartSpec.build: time series", () => {
  it("keeps a missing period as a gap in the line, for each series, at the series' own step", () => {
    const monthly = {
      columns: [{ name: "month", type: "date" }, { name: "channel", type: "text" }, { name: "orders", type: "bigint" }],
      rows: [
        ["2025-01-01", "web", 4],
        ["2025-02-01", "web", 5],
        ["2025-05-01", "web", 7],
        ["2025-01-01", "store", 2],
        ["2025-03-01", "store", 3]
      ]
    }
    const line = Either.getOrThrow(
      ChartSpec.build({ mark: "line", x: "month", y: "orders", color: "channel" }, monthly)
    )
    expect(line.data.values).toEqual([
      { month: "2025-01-01", channel: "web", orders: 4 },
      { month: "2025-02-01", channel: "web", orders: 5 },
      { month: "2025-03-01", channel: "web", orders: null },
      { month: "2025-04-01", channel: "web", orders: null },
      { month: "2025-05-01", channel: "web", orders: 7 },
      { month: "2025-01-01", channel: "store", orders: 2 },
      { month: "2025-02-01", channel: "store", orders: null },
      { month: "2025-03-01", channel: "store", orders: 3 }
    ])
    // Quarters step by three months; bars are not lines, and keep only what was measured.
    const quarterly = {
      columns: [{ name: "quarter", type: "date" }, { name: "revenue", type: "numeric" }],
      rows: [["2024-10-01", 1], ["2025-01-01", 2], ["2025-07-01", 3]]
    }
    const area = Either.getOrThrow(ChartSpec.build({ mark: "area", x: "quarter", y: "revenue" }, quarterly))
    expect(area.data.values.map((row) => [row.quarter, row.revenue])).toEqual([
      ["2024-10-01", 1],
      ["2025-01-01", 2],
      ["2025-04-01", null],
      ["2025-07-01", 3]
    ])
    const bars = Either.getOrThrow(ChartSpec.build({ mark: "bar", x: "quarter", y: "revenue" }, quarterly))
    expect(bars.data.values).toHaveLength(3)
  })
})

describe("ChartSpec.waterfall", () => {
  it("bridges one total to the other, each part starting where the one before ended, and is a valid spec", () => {
    const spec = ChartSpec.waterfall("revenue by region", "revenue", { label: "2024", value: 1000 }, [
      { label: "Europe", change: -200 },
      { label: "Asia", change: 50 }
    ], { label: "2025", value: 850 })
    expect(spec.data.values).toEqual([
      { step: "2024", start: 0, end: 1000, kind: "total" },
      { step: "Europe", start: 1000, end: 800, kind: "fell" },
      { step: "Asia", start: 800, end: 850, kind: "rose" },
      { step: "2025", start: 0, end: 850, kind: "total" }
    ])
    expect(Schema.decodeUnknownEither(ChartSpec.VegaLiteSpec)(spec)._tag).toBe("Right")
  })
})
