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
