/** A dashboard's results as the report a playbook delivers. */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import type * as ChartSpec from "../src/ChartSpec.js"
import type * as Dashboard from "../src/Dashboard.js"
import * as DashboardReport from "../src/DashboardReport.js"
import { ConnectorId } from "../src/Ids.js"
import * as Report from "../src/Report.js"

const tile = (index: number, fields: Partial<Dashboard.TileResult>): Dashboard.TileResult => ({
  index,
  title: `Tile ${index}`,
  visualization: { type: "table" },
  layout: { x: 0, y: index, w: 12, h: 1 },
  status: "ok",
  columns: [],
  rows: [],
  truncated: false,
  cached: false,
  ...fields
})

const spec = (type: "bar" | "line"): ChartSpec.VegaLiteSpec => ({
  $schema: "https://vega.github.io/schema/vega-lite/v6.json",
  width: "container",
  data: { values: [] },
  mark: { type, tooltip: true },
  encoding: {}
})

const response = (tiles: ReadonlyArray<Dashboard.TileResult>): Dashboard.QueryResponse => ({
  name: "sales",
  title: "Sales",
  commit: "c0ffee",
  connector_id: ConnectorId.make(1),
  tiles
})

describe("DashboardReport.draftOf", () => {
  it("writes a figure with its change, a chart as its image, a table's first rows and a failed tile's reason", () => {
    const draft = DashboardReport.draftOf(
      response([
        tile(0, {
          title: "Revenue",
          visualization: { type: "figure" },
          figure: {
            column: "revenue",
            value: 1234.5,
            format: "currency",
            unit: "USD",
            previous: { start: "2025-02-01", end: "2025-03-01", value: 1000, change: 0.2346 }
          }
        }),
        tile(1, { title: "By region", visualization: { type: "bar" }, chart: spec("bar") }),
        tile(2, {
          title: "By channel",
          columns: [{ name: "channel" }, { name: "orders", format: "integer" }],
          rows: Array.from({ length: 12 }, (_, i) => [`channel ${i}`, 1000 + i]),
          truncated: true
        }),
        tile(3, { title: "Broken", status: "failed", error: "no metric named refunds" })
      ]),
      { charts: new Map([[1, Report.chartRef(1)]]), link: "https://sightline.example/#/dashboards/sales" }
    )
    expect(draft.subject).toBe("Sales")
    expect(draft.summary).toBe("3 of 4 tiles of the Sales dashboard, as they read now.")
    expect(draft.blocks).toEqual([
      { type: "hero", heading: "Revenue", content: "1,234.50 USD, up 23.5% on February 2025" },
      { type: "image", image_url: "chart:1", image_alt: "By region", content: "By region" },
      {
        type: "list",
        heading: "By channel (channel · orders)",
        items: [
          ...Array.from({ length: 10 }, (_, i) => `channel ${i} · ${(1000 + i).toLocaleString("en-US")}`),
          "… and 2+ more rows"
        ]
      },
      { type: "text", heading: "Broken", content: "This tile could not be read: no metric named refunds" },
      { type: "text", content: "Open the dashboard: https://sightline.example/#/dashboards/sales" }
    ])
    // It is a report the model could have written: it passes the same checks.
    expect(Schema.decodeUnknownSync(Report.ReportDraft)(draft)).toEqual(draft)
  })

  it("says a fall, a figure without a previous change, and a chart left unnamed is shown as its rows", () => {
    const draft = DashboardReport.draftOf(
      response([
        tile(0, {
          title: "Margin",
          figure: {
            column: "margin",
            value: 0.25,
            format: "percent",
            unit: "USD",
            previous: { start: "2024-01-01", end: "2025-01-01", value: 0.3, change: -1 / 6 }
          }
        }),
        tile(1, {
          title: "Orders",
          figure: {
            column: "orders",
            value: 7,
            format: "integer",
            previous: { start: "2024-01-01", end: "2025-01-01", value: 0 }
          }
        }),
        tile(2, { title: "Chart", chart: spec("line"), columns: [{ name: "n" }], rows: [[null]] })
      ]),
      { charts: new Map() }
    )
    expect(draft.blocks).toEqual([
      { type: "hero", heading: "Margin", content: "25.00%, down 16.7% on 2024" },
      { type: "hero", heading: "Orders", content: "7 (2024: 0)" },
      { type: "list", heading: "Chart (n)", items: ["—"] }
    ])
  })
})
