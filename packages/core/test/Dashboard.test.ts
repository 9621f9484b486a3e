/** Dashboards as library files: the format's checks with their lines, a tile's query under the shared filters, and a tile that does not compile. */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Dashboard from "../src/Dashboard.js"
import * as SemanticModel from "../src/SemanticModel.js"

const model = Either.getOrThrow(SemanticModel.parse(
  "semantic/shop.yaml",
  `name: shop
time_zone: Europe/Paris
tables:
  - name: orders
    base_table: { schema: shop, table: orders }
    primary_key: { columns: [id] }
    dimensions:
      - name: channel
        values: [{ value: web, synonyms: [online] }, { value: store }]
    time_dimensions:
      - { name: ordered, expr: ordered_at, grains: [day, week, month, quarter] }
    measures:
      - { name: orders, agg: count, description: number of orders }
      - { name: shipping, agg: sum, expr: shipping_fee }
    filters:
      - { name: paid, expr: "status = 'paid'", description: paid orders only }
  - name: lines
    base_table: { schema: shop, table: order_lines }
    facts:
      - { name: amount, expr: quantity * price }
    measures:
      - { name: revenue, agg: sum, expr: amount, filters: [paid], time_dimension: orders.ordered }
  - name: customers
    base_table: { schema: shop, table: customers }
    row_filter: region = _svc.client_attributes_json.region
    dimensions:
      - { name: region }
relationships:
  - { name: lines_orders, left_table: lines, right_table: orders, relationship_columns: [{ left_column: order_id, right_column: id }] }
  - { name: orders_customers, left_table: orders, right_table: customers, relationship_columns: [{ left_column: customer_id, right_column: id }] }
metrics:
  - { name: aov, type: ratio, numerator: revenue, denominator: orders }
  - { name: revenue_yoy, type: period_over_period, measure: revenue, offset: 1 year }
verified_queries:
  - name: by_channel
    question: Revenue by channel?
    parameters: [{ name: since, type: date }, { name: top, type: number, default: 5 }]
    sql: |
      WITH totals AS (SELECT o.channel, SUM(l.amount) AS revenue FROM __lines l JOIN __orders o ON o.id = l.order_id
        WHERE o.ordered >= :since GROUP BY o.channel)
      SELECT * FROM totals ORDER BY revenue DESC LIMIT :top;
`
))

const path = "dashboards/sales.yaml"
const sales = `title: Sales overview
description: Revenue and orders by region and channel
connector: Shop
filters:
  dimensions:
    - { dimension: region, values: [Europe] }
    - { dimension: channel }
  time: { grain: month, start: "2025-01-01", end: "2026-01-01" }
tiles:
  - title: Revenue
    query: { semantic: { metrics: [revenue] } }
    visualization: { type: figure, compare: previous_period }
    layout: { x: 0, y: 0, w: 4, h: 2 }
  - title: Revenue by month
    query: { semantic: { metrics: [revenue], time: { grain: month } } }
    visualization: { type: line, x: ordered, y: revenue }
    layout: { x: 4, y: 0, w: 8, h: 4 }
  - title: Orders by channel, all regions
    query: { semantic: { metrics: [orders], dimensions: [channel] } }
    visualization: { type: bar, x: channel, y: orders }
    follows: [time]
    layout: { x: 0, y: 4, w: 6, h: 4 }
  - title: Revenue by channel
    query: { verified: by_channel, params: { since: "2025-01-01" } }
    visualization: { type: table }
    layout: { x: 6, y: 4, w: 6, h: 4 }
`

describe("Dashboard.parse", () => {
  it("reads a dashboard file", () => {
    const file = Either.getOrThrow(Dashboard.parse(path, sales))
    expect(file.tiles.map((tile) => tile.visualization.type)).toEqual(["figure", "line", "bar", "table"])
    expect(Dashboard.isDashboardPath(path)).toBe(true)
    expect(Dashboard.isDashboardPath("dashboards/nested/x.yaml")).toBe(false)
    expect(Dashboard.isDashboardPath("semantic/sales.yaml")).toBe(false)
    expect(Dashboard.nameOf(path)).toBe("sales")
  })

  it("refuses unknown keys, and what the format alone cannot say, each with its line", () => {
    const unknown = Dashboard.parse(
      path,
      sales.replace("    visualization: { type: table }", "    visualisation: { type: table }")
    )
    const refused = Either.getLeft(unknown)
    expect(refused._tag === "Some" ? refused.value.map(Dashboard.formatProblem) : []).toEqual([
      "dashboards/sales.yaml:25: tiles.3.visualisation: is unexpected, expected: \"title\" | \"query\" | " +
      "\"visualization\" | \"follows\" | \"layout\"",
      "dashboards/sales.yaml:23: tiles.3.visualization: is missing"
    ])
    const broken = sales
      .replace("layout: { x: 4, y: 0, w: 8, h: 4 }", "layout: { x: 3, y: 0, w: 10, h: 4 }")
      .replace("title: Revenue by channel", "title: Revenue")
      .replace("follows: [time]", "follows: [time, segment]")
    const problems = Either.getLeft(Dashboard.parse(path, broken))
    expect(problems._tag === "Some" ? problems.value.map(Dashboard.formatProblem) : []).toEqual([
      "dashboards/sales.yaml:17: tiles.1: the tile reaches past the grid's 12 columns (x 3 + w 10)",
      "dashboards/sales.yaml:17: tiles.1: the tile lies over tiles.0 (Revenue)",
      "dashboards/sales.yaml:21: tiles.2: follows segment, which is not a shared filter (time, region, channel)",
      "dashboards/sales.yaml:23: tiles.3: another tile is titled \"Revenue\""
    ])
  })
})

describe("Dashboard.tileQuery", () => {
  const file = Either.getOrThrow(Dashboard.parse(path, sales))

  it("applies the shared filters a tile follows, at their defaults or the viewer's values", () => {
    expect(Dashboard.tileQuery(file, file.tiles[0]!)).toEqual({
      metrics: ["revenue"],
      time: { start: "2025-01-01", end: "2026-01-01" },
      filters: [{ dimension: "region", operator: "in", values: ["Europe"] }]
    })
    // A series keeps its grain until the viewer picks another; a channel left empty is every channel.
    expect(Dashboard.tileQuery(file, file.tiles[1]!, {
      dimensions: { region: ["Asia", "Europe"], channel: ["web"] },
      time: { grain: "week", start: "2025-06-01", end: "2025-07-01" }
    })).toEqual({
      metrics: ["revenue"],
      time: { grain: "week", start: "2025-06-01", end: "2025-07-01" },
      filters: [
        { dimension: "region", operator: "in", values: ["Asia", "Europe"] },
        { dimension: "channel", operator: "in", values: ["web"] }
      ]
    })
    // It follows only the period; a verified query has no semantic query to narrow.
    expect(Dashboard.tileQuery(file, file.tiles[2]!, { dimensions: { region: ["Asia"] } })).toEqual({
      metrics: ["orders"],
      dimensions: ["channel"],
      time: { start: "2025-01-01", end: "2026-01-01" }
    })
    expect(Dashboard.tileQuery(file, file.tiles[3]!)).toBeUndefined()
  })

  it("keeps a tile's own period against the dashboard's default, and gives it up to the viewer's pick", () => {
    const pinned: Dashboard.Tile = {
      title: "Revenue last year",
      query: { semantic: { metrics: ["revenue"], time: { start: "2024-01-01", end: "2025-01-01" } } },
      visualization: { type: "figure" },
      layout: { x: 0, y: 0, w: 3, h: 2 }
    }
    expect(Dashboard.tileQuery(file, pinned)?.time).toEqual({ start: "2024-01-01", end: "2025-01-01" })
    expect(Dashboard.tileQuery(file, pinned, { time: { start: "2025-03-01", end: "2025-04-01" } })?.time)
      .toEqual({ start: "2025-03-01", end: "2025-04-01" })
    expect(
      Dashboard.tileQuery(file, { ...pinned, follows: [] }, { time: { start: "2025-03-01", end: "2025-04-01" } })
        ?.time
    ).toEqual({ start: "2024-01-01", end: "2025-01-01" })
  })
})

describe("Dashboard.check", () => {
  it("compiles every tile against the governing model, naming the tiles that do not, with their lines", () => {
    const file = Either.getOrThrow(Dashboard.parse(path, sales))
    expect(Dashboard.check(path, sales, file, model, "postgres")).toEqual([])
    const wrong = sales.replace("metrics: [orders], dimensions: [channel]", "metrics: [margin], dimensions: [channel]")
      .replace("verified: by_channel", "verified: by_region")
    const problems = Dashboard.check(path, wrong, Either.getOrThrow(Dashboard.parse(path, wrong)), model, "postgres")
    expect(problems.map(Dashboard.formatProblem)).toEqual([
      expect.stringMatching(/^dashboards\/sales\.yaml:19: tiles\.2 \(Orders by channel, all regions\): .*margin/),
      "dashboards/sales.yaml:24: tiles.3 (Revenue by channel): the model has no verified query by_region"
    ])
  })
})

describe("Dashboard.previousPeriod", () => {
  it("steps back whole months for a period of months, else as many days", () => {
    expect(Dashboard.previousPeriod({ start: "2025-03-01", end: "2025-04-01" }))
      .toEqual({ start: "2025-02-01", end: "2025-03-01" })
    expect(Dashboard.previousPeriod({ start: "2025-01-01", end: "2025-04-01" }))
      .toEqual({ start: "2024-10-01", end: "2025-01-01" })
    expect(Dashboard.previousPeriod({ start: "2025-01-01", end: "2026-01-01" }))
      .toEqual({ start: "2024-01-01", end: "2025-01-01" })
    expect(Dashboard.previousPeriod({ start: "2025-03-10", end: "2025-03-17" }))
      .toEqual({ start: "2025-03-03", end: "2025-03-10" })
  })
})

describe("Dashboard.withTile", () => {
  const tile = (title: string, dimensions: ReadonlyArray<string> = []) => {
    const query = { semantic: { metrics: ["revenue"], dimensions } }
    return { title, query, visualization: Dashboard.visualizationOf(query) }
  }
  const read = (text: string) => Either.getOrThrow(Dashboard.parse("dashboards/sales.yaml", text))

  it("creates a dashboard, then sets each tile beside the last row's or under it, titles told apart", () => {
    const first = Either.getOrThrow(Dashboard.withTile("sales_2025", undefined, "Demo", tile("Revenue")))
    expect(first.index).toBe(0)
    expect(read(first.text)).toMatchObject({
      title: "Sales 2025",
      connector: "Demo",
      tiles: [{ title: "Revenue", visualization: { type: "figure" }, layout: { x: 0, y: 0, w: 3, h: 2 } }]
    })
    const commented = `# Reviewed by finance.\n${first.text}`
    const second = Either.getOrThrow(Dashboard.withTile("sales_2025", commented, "Demo", tile("Revenue", ["region"])))
    // The file is added to, never written again: what was there stays as it was.
    expect(second.text.startsWith(commented)).toBe(true)
    expect(read(second.text).tiles[1]).toMatchObject({
      title: "Revenue (2)",
      visualization: { type: "bar" },
      layout: { x: 3, y: 0, w: 6, h: 4 }
    })
    // No room left on the row: under it.
    const third = Either.getOrThrow(Dashboard.withTile("sales_2025", second.text, "Demo", tile("By channel", ["a"])))
    expect(read(third.text).tiles[2]!.layout).toEqual({ x: 0, y: 4, w: 6, h: 4 })
    expect(Dashboard.withTile("sales_2025", second.text, "Other", tile("X"))).toEqual(
      Either.left("dashboards/sales_2025.yaml shows connector Demo, not Other: add it to another dashboard")
    )
  })
})

describe("Dashboard.chartOf", () => {
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
    expect(Dashboard.chartOf(tile("figure"), columns, rows)).toBeUndefined()
    expect(Dashboard.chartOf(tile("table"), columns, rows)).toBeUndefined()
    const waterfall = Either.getOrThrow(Dashboard.chartOf(tile("waterfall"), columns, rows)!)
    expect(waterfall.data.values).toEqual([
      { step: "web", start: 0, end: 60, kind: "total" },
      { step: "store", start: 60, end: 90, kind: "rose" },
      { step: "partner", start: 90, end: 80, kind: "fell" },
      { step: "Total", start: 0, end: 80, kind: "total" }
    ])
    expect(Dashboard.figureOf(columns, [[null, 120]], { start: "a", end: "b", rows: [[null, 100]] }))
      .toEqual({
        column: "revenue",
        value: 120,
        format: "currency",
        previous: { start: "a", end: "b", value: 100, change: 0.2 }
      })
  })
})

describe("Dashboard.edited", () => {
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
    const next = Either.getOrThrow(Dashboard.edited("dashboards/sales.yaml", text, [
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
    expect(Dashboard.edited("dashboards/sales.yaml", text, [{ index: 1, layout: { x: 0, y: 0, w: 3, h: 2 } }]))
      .toEqual(Either.left(expect.stringMatching(/tiles\.1: the tile lies over tiles\.0 \(Revenue\)/)))
    expect(Dashboard.edited("dashboards/sales.yaml", text, [{ index: 0, title: "A" }, { index: 0, title: "B" }]))
      .toEqual(Either.left("tiles.0: edited twice; give its title and layout in one edit"))
  })
})
