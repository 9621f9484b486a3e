import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
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
