/** A dashboard file changed as text: tiles added where the grid has room, renamed and moved in place. */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Dashboard from "../src/Dashboard.js"
import * as DashboardEdits from "../src/DashboardEdits.js"

describe("DashboardEdits.withTile", () => {
  const tile = (title: string, dimensions: ReadonlyArray<string> = []) => {
    const query = { semantic: { metrics: ["revenue"], dimensions } }
    return { title, query, visualization: DashboardEdits.visualizationOf(query) }
  }
  const read = (text: string) => Either.getOrThrow(Dashboard.parse("dashboards/sales.yaml", text))

  it("creates a dashboard, then sets each tile beside the last row's or under it, titles told apart", () => {
    const first = Either.getOrThrow(DashboardEdits.withTile("sales_2025", undefined, "Demo", tile("Revenue")))
    expect(first.index).toBe(0)
    expect(read(first.text)).toMatchObject({
      title: "Sales 2025",
      connector: "Demo",
      tiles: [{ title: "Revenue", visualization: { type: "figure" }, layout: { x: 0, y: 0, w: 3, h: 2 } }]
    })
    const commented = `# Reviewed by finance.\n${first.text}`
    const second = Either.getOrThrow(
      DashboardEdits.withTile("sales_2025", commented, "Demo", tile("Revenue", ["region"]))
    )
    // The file is added to, never written again: what was there stays as it was.
    expect(second.text.startsWith(commented)).toBe(true)
    expect(read(second.text).tiles[1]).toMatchObject({
      title: "Revenue (2)",
      visualization: { type: "bar" },
      layout: { x: 3, y: 0, w: 6, h: 4 }
    })
    // No room left on the row: under it.
    const third = Either.getOrThrow(
      DashboardEdits.withTile("sales_2025", second.text, "Demo", tile("By channel", ["a"]))
    )
    expect(read(third.text).tiles[2]!.layout).toEqual({ x: 0, y: 4, w: 6, h: 4 })
    expect(DashboardEdits.withTile("sales_2025", second.text, "Other", tile("X"))).toEqual(
      Either.left("dashboards/sales_2025.yaml shows connector Demo, not Other: add it to another dashboard")
    )
  })
})

describe("DashboardEdits.edited", () => {
  it("replaces a title and a layout where they stand, and refuses what breaks the grid", () => {
    const text = `# Reviewed by finance.
title: Sales
connector: Demo
tiles:
  - title: Revenue
    query: { semantic: { metrics: [revenue] } }
    visualization: { type: figure }
    layout: { x: 0, y: 0, w: 3, h: 2 }
  - title: "Orders: all"
    query: { semantic: { metrics: [orders] } }
    visualization: { type: figure }
    layout:
      x: 3
      y: 0
      w: 3
      h: 2
`
    const next = Either.getOrThrow(DashboardEdits.edited("dashboards/sales.yaml", text, [
      { index: 0, title: "Revenue: this year" },
      { index: 1, layout: { x: 6, y: 0, w: 6, h: 2 } }
    ]))
    // Nothing else moves: not the comment, the flow style of the queries, nor the other tile.
    expect(next).toBe(
      text.replace("  - title: Revenue\n", "  - title: \"Revenue: this year\"\n")
        .replace("x: 3\n      y: 0\n      w: 3\n      h: 2", "{ x: 6, y: 0, w: 6, h: 2 }")
    )
    const read = Either.getOrThrow(Dashboard.parse("dashboards/sales.yaml", next))
    expect(read.tiles.map((t) => [t.title, t.layout])).toEqual([
      ["Revenue: this year", { x: 0, y: 0, w: 3, h: 2 }],
      ["Orders: all", { x: 6, y: 0, w: 6, h: 2 }]
    ])
    expect(next.startsWith("# Reviewed by finance.\n")).toBe(true)
    expect(DashboardEdits.edited("dashboards/sales.yaml", text, [{ index: 1, layout: { x: 0, y: 0, w: 3, h: 2 } }]))
      .toEqual(Either.left(expect.stringMatching(/tiles\.1: the tile lies over tiles\.0 \(Revenue\)/)))
    expect(DashboardEdits.edited("dashboards/sales.yaml", text, [{ index: 0, title: "A" }, { index: 0, title: "B" }]))
      .toEqual(Either.left("tiles.0: edited twice; give its title and layout in one edit"))
  })
})
