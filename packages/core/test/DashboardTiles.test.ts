/** A tile's rows as shown: the period a figure compares with, its chart, its figure. */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type * as Dashboard from "../src/Dashboard.js"
import * as DashboardTiles from "../src/DashboardTiles.js"

describe("DashboardTiles.previousPeriod", () => {
  it("steps back whole months for a period of months, else as many days", () => {
    expect(DashboardTiles.previousPeriod({ start: "2025-03-01", end: "2025-04-01" }))
      .toEqual({ start: "2025-02-01", end: "2025-03-01" })
    expect(DashboardTiles.previousPeriod({ start: "2025-01-01", end: "2025-04-01" }))
      .toEqual({ start: "2024-10-01", end: "2025-01-01" })
    expect(DashboardTiles.previousPeriod({ start: "2025-01-01", end: "2026-01-01" }))
      .toEqual({ start: "2024-01-01", end: "2025-01-01" })
    expect(DashboardTiles.previousPeriod({ start: "2025-03-10", end: "2025-03-17" }))
      .toEqual({ start: "2025-03-03", end: "2025-03-10" })
  })
})

describe("DashboardTiles.chartOf", () => {
  const tile = (type: Dashboard.VisualizationType): Dashboard.Tile => ({
    title: "Revenue by channel",
    query: { semantic: { metrics: ["revenue"], dimensions: ["channel"] } },
    visualization: { type },
    layout: { x: 0, y: 0, w: 6, h: 4 }
  })
  const columns: ReadonlyArray<Dashboard.TileColumn> = [
    { name: "channel", kind: "dimension" },
    { name: "revenue", kind: "metric", format: "currency" }
  ]
  const rows = [["web", 60], ["store", 30], ["partner", -10]]

  it("draws no chart for a figure or a table, and a waterfall as a running total", () => {
    expect(DashboardTiles.chartOf(tile("figure"), columns, rows)).toBeUndefined()
    expect(DashboardTiles.chartOf(tile("table"), columns, rows)).toBeUndefined()
    const waterfall = Either.getOrThrow(DashboardTiles.chartOf(tile("waterfall"), columns, rows)!)
    expect(waterfall.data.values).toEqual([
      { step: "web", start: 0, end: 60, kind: "total" },
      { step: "store", start: 60, end: 90, kind: "rose" },
      { step: "partner", start: 90, end: 80, kind: "fell" },
      { step: "Total", start: 0, end: 80, kind: "total" }
    ])
    expect(DashboardTiles.figureOf(columns, [[null, 120]], { start: "a", end: "b", rows: [[null, 100]] }))
      .toEqual({
        column: "revenue",
        value: 120,
        format: "currency",
        previous: { start: "a", end: "b", value: 100, change: 0.2 }
      })
  })
})
