import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ChartSpec from "../src/ChartSpec.js"

describe("ChartSpec.build", () => {
  const ranked = {
    columns: [{ name: "product", type: "text" }, { name: "revenue", type: "numeric" }],
    rows: [["Vista", 30], ["Alto", 20], ["Nimbus", 10]]
  }

  it("keeps a ranking's order on a bar chart's categories, not the alphabet's", () => {
    const spec = Either.getOrThrow(ChartSpec.build({ mark: "bar", x: "product", y: "revenue" }, ranked))
    expect(spec.encoding.x).toEqual({ field: "product", type: "nominal", sort: null })
    expect(spec.data.values.map((row) => row.product)).toEqual(["Vista", "Alto", "Nimbus"])
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
