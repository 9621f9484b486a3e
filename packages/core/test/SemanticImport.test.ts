import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as path from "node:path"
import * as SemanticCompiler from "../src/SemanticCompiler.js"
import * as SemanticImport from "../src/SemanticImport.js"
import * as SemanticModel from "../src/SemanticModel.js"

const fixtures = path.join(__dirname, "fixtures", "import")
const filesUnder = (dir: string): Array<SemanticImport.SourceFile> => {
  const walk = (at: string): Array<string> =>
    fs.readdirSync(at, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(path.join(at, e.name)) : [path.join(at, e.name)]
    )
  return walk(dir).map((p) => ({ path: path.relative(dir, p), text: fs.readFileSync(p, "utf8") }))
}
const imported = (
  files: ReadonlyArray<SemanticImport.SourceFile>,
  options: SemanticImport.Options = {},
  format: SemanticImport.Format = "dbt"
) => Either.getOrThrow(SemanticImport.importFiles(format, files, options))
const lineOf = (report: ReadonlyArray<SemanticImport.ReportLine>, construct: string, name: string) =>
  report.find((l) => l.construct === construct && l.name === name)

describe("SemanticImport: dbt MetricFlow", () => {
  const legacy = imported(filesUnder(path.join(fixtures, "dbt")), { schema: "public", connector: "Shop" })
  const model = Either.getOrThrow(SemanticModel.validate("semantic/shop_analytics.yaml", legacy.model))

  it("reads the legacy spec into a model that holds together, named after the project", () => {
    expect(legacy.model.name).toBe("shop_analytics")
    expect(legacy.model.connector).toBe("Shop")
    expect(model.tables.map((t) => t.name).sort()).toEqual(["customers", "order_items", "orders", "regions", "returns"])
    expect(model.relationships.map((r) => `${r.left_table}->${r.right_table}`).sort()).toEqual([
      "customers->regions",
      "order_items->orders",
      "orders->customers",
      "returns->order_items"
    ])
    expect(model.tables.find((t) => t.name === "orders")!.primary_key).toEqual({ columns: ["id"] })
    // Labels and synonyms come along as the reader's vocabulary.
    const orders = model.tables.find((t) => t.name === "orders")!
    expect(orders.dimensions!.find((d) => d.name === "channel")!.synonyms).toEqual(["Sales channel"])
    expect(orders.dimensions!.find((d) => d.name === "status")!.synonyms).toEqual(["order status"])
    expect(model.metrics.find((m) => m.name === "average_order_value")).toMatchObject({
      type: "ratio",
      numerator: "revenue",
      denominator: "orders",
      synonyms: ["AOV"]
    })
  })

  it("lists every construct of the source with its file and line, none dropped unsaid", () => {
    const sources = filesUnder(path.join(fixtures, "dbt")).filter((f) =>
      f.path.endsWith(".yml") && f.path !== "dbt_project.yml"
    )
    const declared = sources.flatMap((f) => [...f.text.matchAll(/^ {2}- name: (\w+)$/gm)].map((m) => m[1]!))
    for (const name of declared) {
      expect(legacy.report.some((l) => l.name === name), name).toBe(true)
    }
    expect(lineOf(legacy.report, "metric", "revenue")).toMatchObject({
      file: "models/marts/orders.yml",
      line: 76,
      outcome: "imported"
    })
    expect(lineOf(legacy.report, "measure", "p90_line")).toMatchObject({ line: 68, outcome: "imported" })
    expect(lineOf(legacy.report, "saved query", "weekly_by_hour")).toMatchObject({
      file: "models/marts/customers.yml",
      outcome: "refused",
      note: "its grain hour is not one Sightline reads"
    })
    expect(SemanticImport.tally(legacy.report)).toEqual({
      imported: legacy.report.length - 1,
      approximated: 0,
      refused: 1
    })
    // In the order the files say them.
    const lines = legacy.report.filter((l) => l.file === "models/marts/orders.yml").map((l) => l.line!)
    expect(lines).toEqual([...lines].sort((a, b) => a - b))
    expect(SemanticImport.formatReport(legacy.report)).toContain(
      "models/marts/orders.yml:76: metric revenue: imported (line_revenue, filtered)"
    )
  })

  it("carries each metric type over with what defines it", () => {
    const byName = (name: string) => model.metrics.find((m) => m.name === name)
    const measure = (name: string) => model.measures.find((m) => m.name === name)
    expect(measure("revenue")).toMatchObject({ agg: "sum", expr: "line_total", table: "order_items" })
    expect(model.tables.find((t) => t.name === "orders")!.filters).toEqual(
      expect.arrayContaining([{ name: measure("revenue")!.filters![0]!, expr: "status != 'cancelled'" }])
    )
    expect(measure("p90_line")).toMatchObject({ agg: "percentile", agg_params: { percentile: 0.9 } })
    expect(measure("latest_day_orders")!.non_additive_dimension).toEqual({
      name: "orders.ordered_at",
      window_groupings: ["customer_id"]
    })
    expect(byName("order_growth_mom")).toMatchObject({
      type: "derived",
      metrics: [{ name: "order_count" }, { name: "order_count", alias: "last_month", offset_window: "1 month" }]
    })
    expect(byName("orders_last_7_days")).toMatchObject({ type: "cumulative", measure: "order_count", window: "7 days" })
    expect(byName("orders_mtd")).toMatchObject({ type: "cumulative", grain_to_date: "month", period_agg: "last" })
    expect(byName("signup_to_order_rate")).toMatchObject({
      type: "conversion",
      base_measure: "signups",
      conversion_measure: "order_count",
      entity: "id",
      conversion_entity: "customer_id",
      window: "30 days"
    })
    // Saved queries are verified semantic queries, compiled in the connector's dialect.
    const query = model.verifiedQueries.find((q) => q.name === "orders_by_month_by_region")!
    expect(query.query).toEqual({
      metrics: ["orders"],
      dimensions: ["regions.region_name"],
      time: { grain: "month", start: "2020-01-01" }
    })
    expect(Either.isRight(SemanticCompiler.verifiedSql(model, query, {}, "mysql"))).toBe(true)
  })

  it("reads the latest spec (metrics on the models, entities and dimensions on columns) to the same definitions", () => {
    const latest = imported(filesUnder(path.join(fixtures, "dbt-latest")), { schema: "public" })
    const latestModel = Either.getOrThrow(SemanticModel.validate("semantic/x.yaml", latest.model))
    const definition = (m: SemanticModel.SemanticModel, name: string) => {
      const found = m.measures.find((x) => x.name === name)!
      return { agg: found.agg, expr: found.expr, table: found.table, filters: found.filters?.length ?? 0 }
    }
    for (const name of ["revenue", "orders", "order_count", "signups"]) {
      expect(definition(latestModel, name), name).toEqual(definition(model, name))
    }
    expect(latestModel.measures.find((m) => m.name === "p90_line")!.agg_params).toEqual({ percentile: 0.9 })
    expect(latestModel.measures.find((m) => m.name === "latest_day_orders")!.non_additive_dimension).toEqual({
      name: "orders.ordered_at",
      window_groupings: ["customer_id"]
    })
    for (const name of ["average_order_value", "order_growth_mom", "orders_mtd", "signup_to_order_rate"]) {
      const a = latestModel.metrics.find((m) => m.name === name)
      const b = model.metrics.find((m) => m.name === name)
      expect({ ...a, description: undefined, synonyms: undefined }, name).toEqual({
        ...b,
        description: undefined,
        synonyms: undefined
      })
    }
    // Only the time spine's fiscal year, a column of its table, is not carried, and the report says how to.
    expect(latest.report.filter((l) => l.outcome === "refused")).toEqual([{
      file: "models/shop.yml",
      line: 9,
      construct: "custom granularity",
      name: "fiscal_year",
      outcome: "refused",
      note: "it is the time spine's column fiscal_year_start, whose values Sightline does not read: " +
        "define it under custom_granularities with its grain and start_month"
    }])
  })

  it("reads semantic_manifest.json: its relations, windows as counts and grains, and says what it cannot carry", () => {
    const manifest = fs.readFileSync(path.join(fixtures, "semantic_manifest.json"), "utf8")
    const result = imported([{ path: "target/semantic_manifest.json", text: manifest }])
    expect(result.model.tables[0]!.base_table).toEqual({ schema: "analytics", table: "orders" })
    expect(
      imported([{ path: "target/semantic_manifest.json", text: manifest }], { schema: "public" }).model.tables[0]!
        .base_table
    )
      .toEqual({ schema: "public", table: "orders" })
    expect(result.model.metrics).toEqual(expect.arrayContaining([
      expect.objectContaining({ name: "orders_7d", type: "cumulative", window: "7 days", period_agg: "first" }),
      expect.objectContaining({
        name: "orders_wow",
        metrics: [{ name: "orders" }, { name: "orders", alias: "orders_last_week", offset_window: "1 week" }]
      })
    ]))
    expect(result.model.metrics).toEqual(expect.arrayContaining([
      expect.objectContaining({
        name: "orders_since_month_start",
        metrics: [{ name: "orders" }, { name: "orders", alias: "orders_at_month_start", offset_to_grain: "month" }]
      })
    ]))
    expect(lineOf(result.report, "metric", "orders_since_month_start")).toMatchObject({
      file: "target/semantic_manifest.json",
      outcome: "imported"
    })
    expect(lineOf(result.report, "metric", "orders")!.line).toBeGreaterThan(20)
    expect(result.model.verified_queries![0]).toEqual({
      name: "orders_by_status",
      question: "How many orders in each status?",
      query: { metrics: ["orders"], dimensions: ["orders.status"] }
    })
  })

  it("says what it cannot read: a file that is not YAML, a type it does not know, a filter naming nothing, a query that does not compile", () => {
    const broken = SemanticImport.importFiles("dbt", [
      { path: "models/a.yml", text: "semantic_models:\n  - name: orders\n    model: [unclosed\n" }
    ])
    expect(Either.getLeft(broken)).toMatchObject({
      _tag: "Some",
      value: { _tag: "SemanticImportError", file: "models/a.yml", line: 4 }
    })
    const files = filesUnder(path.join(fixtures, "dbt"))
    const extra = {
      path: "models/extra.yml",
      text: `metrics:
  - name: mystery
    type: magic
  - name: paid_orders
    type: simple
    type_params:
      measure: order_count
    filter: "{{ Dimension('order__payment_state') }} = 'paid'"
  - name: sql_ratio
    type: derived
    type_params:
      expr: CASE WHEN orders > 0 THEN revenue END
      metrics: [{ name: orders }, { name: revenue }]
saved_queries:
  - name: signups_by_channel
    query_params:
      metrics: [signups]
      group_by: ["Dimension('order__channel')"]
`
    }
    const result = imported([...files, extra], { schema: "public" })
    expect(result.report.filter((l) => l.file === "models/extra.yml").map((l) => [l.line, l.name, l.outcome, l.note]))
      .toEqual([
        [2, "mystery", "refused", "its type magic is not one MetricFlow defines"],
        [
          4,
          "paid_orders",
          "refused",
          "its filter cannot be read: Dimension('order__payment_state') names nothing the project defines"
        ],
        [
          9,
          "sql_ratio",
          "refused",
          "its expr is SQL that derived metrics do not read (unexpected \"> 0 THEN rev\" at character 17)"
        ],
        [
          15,
          "signups_by_channel",
          "refused",
          "it does not compile: signups cannot be read by channel: no many-to-one relationship leads from customers to orders"
        ]
      ])
  })
})

describe("SemanticImport: Apache Ossie (OSI)", () => {
  const shop = imported(filesUnder(path.join(fixtures, "dbt")), { schema: "public", connector: "Shop" }).model

  it("writes a model as an OSI document that reads back as the same model", () => {
    const core = Either.getOrThrow(
      SemanticModel.parse("semantic/shop.yaml", fs.readFileSync(path.join(fixtures, "roundtrip.yaml"), "utf8"))
    )
    for (const model of [shop, core.file]) {
      const document = SemanticImport.toOsi(model)
      expect(document).toMatch(/^version: 0\.1\.1\nsemantic_model:\n/)
      const back = Either.getOrThrow(SemanticImport.importFiles("osi", [{ path: "shop.osi.yaml", text: document }]))
      expect(back.model).toEqual(JSON.parse(JSON.stringify(model)))
      expect(SemanticImport.tally(back.report).refused).toBe(0)
    }
  })

  it("writes the portable part for other tools: datasets, fields, relationships, metrics as aggregate SQL", () => {
    const document = SemanticImport.toOsi(shop)
    expect(document).toContain("source: public.order_items")
    expect(document).toContain("expression: SUM(CASE WHEN status != 'cancelled' THEN order_items.line_total END)")
    expect(document).toContain("from: order_items\n        to: orders")
    expect(document).toContain("vendor_name: SIGHTLINE")
  })

  it("reads another tool's document from its portable part, and refuses what is not one aggregate of one dataset", () => {
    const result = imported(filesUnder(path.join(fixtures, "osi")), {}, "osi")
    const model = Either.getOrThrow(SemanticModel.validate("semantic/shop_osi.yaml", result.model))
    expect(model.file.custom_instructions).toBe("Money is in US dollars.")
    expect(model.measures.map((m) => [m.name, m.agg, m.expr ?? "", m.table])).toEqual([
      ["order_count", "count_distinct", "id", "orders"],
      ["gross_revenue", "sum", "line_total", "order_items"]
    ])
    expect(model.measures.find((m) => m.name === "gross_revenue")!.synonyms).toEqual(["gross sales"])
    const orders = model.tables.find((t) => t.name === "orders")!
    expect(orders.time_dimensions).toEqual([{ name: "ordered_at", synonyms: ["Order date"] }])
    expect(orders.facts).toEqual([{ name: "customer_id", expr: "customer_id" }])
    expect(lineOf(result.report, "metric", "revenue_per_order")).toMatchObject({
      file: "shop.osi.yaml",
      outcome: "refused",
      note: "its expression does not read exactly one dataset's columns"
    })
    expect(
      Either.isRight(
        SemanticCompiler.compile(model, { metrics: ["gross_revenue"], dimensions: ["channel"] }, "postgres")
      )
    ).toBe(true)
    expect(
      Either.getLeft(
        SemanticImport.importFiles("osi", [{
          path: "x.yaml",
          text: "version: '3.0'\nsemantic_model: [{ name: x, datasets: [] }]\n"
        }])
      )
    )
      .toMatchObject({
        _tag: "Some",
        value: { message: "OSI version 3.0 is not one this importer reads (0.1.x, 0.2.x)" }
      })
  })
})

describe("SemanticImport: Cube", () => {
  const result = imported(filesUnder(path.join(fixtures, "cube")), { name: "shop_cube" }, "cube")
  const model = Either.getOrThrow(SemanticModel.validate("semantic/shop_cube.yaml", result.model))
  const line = (name: string) => result.report.find((l) => l.name === name)

  it("reads cubes in YAML and JavaScript into tables, joins and measures, and the report says what became of each", () => {
    expect(model.tables.map((t) => t.name)).toEqual(["customers", "regions", "orders", "order_items"])
    expect(model.tables.find((t) => t.name === "order_items")!.base_table).toEqual({
      schema: "public",
      table: "order_items"
    })
    expect(
      model.relationships.map((r) =>
        `${r.left_table}->${r.right_table}:${r.relationship_columns[0]!.left_column}=${
          r.relationship_columns[0]!.right_column
        }`
      )
    ).toEqual([
      "customers->regions:region_id=id",
      "orders->customers:customer_id=id",
      "order_items->orders:order_id=id"
    ])
    const customers = model.tables.find((t) => t.name === "customers")!
    expect(customers.time_dimensions).toEqual([{ name: "created_at", synonyms: ["Signup date"] }])
    expect(customers.dimensions).toEqual([{ name: "id" }, { name: "segment" }])
    expect(model.measures.find((m) => m.name === "revenue")).toMatchObject({
      agg: "sum",
      expr: "line_total",
      format: "currency",
      synonyms: ["Revenue"]
    })
    expect(model.tables.find((t) => t.name === "orders")!.filters).toEqual([
      { name: "completed", expr: "status = 'completed'" },
      { name: "orders_filter", expr: "status != 'cancelled'" },
      { name: "revenue_filter", expr: "status != 'cancelled'" }
    ])
    expect(model.metrics.find((m) => m.name === "average_order_value")).toMatchObject({
      type: "derived",
      expr: "revenue / orders",
      synonyms: ["AOV"]
    })
    expect(model.metrics.find((m) => m.name === "orders_last_7_days")).toEqual({
      name: "orders_last_7_days",
      type: "cumulative",
      measure: "orders_last_7_days_base",
      window: "7 days"
    })
    expect(model.metrics.find((m) => m.name === "orders_mtd")).toMatchObject({
      type: "cumulative",
      grain_to_date: "month"
    })
    expect(model.metrics.find((m) => m.name === "orders_last_month")).toMatchObject({
      type: "period_over_period",
      measure: "order_count",
      offset: "1 month",
      calculation: "previous"
    })
    expect(line("orders.ordering_customers")).toMatchObject({
      outcome: "approximated",
      note: "counted exactly, not approximately"
    })
    expect(line("order_items.p90_line")).toMatchObject({ outcome: "refused" })
    expect(line("sales")).toMatchObject({ file: "model/views/sales.yml", line: 2, outcome: "approximated" })
    expect(line("orders.by_day")).toMatchObject({ outcome: "imported" })
    // A time dimension's granularities: a fiscal year by offset, its quarters by origin; weeks are not read.
    expect(model.file.custom_granularities).toEqual([
      { name: "fiscal_year", label: "Fiscal year", grain: "year", start_month: 4 },
      { name: "fiscal_quarter", grain: "quarter", start_month: 4 }
    ])
    expect(line("orders.ordered_at.fiscal_year")).toMatchObject({
      file: "model/cubes/orders.yml",
      line: 26,
      outcome: "imported",
      note: "fiscal_year: years from April"
    })
    expect(line("orders.ordered_at.sunday_week")).toMatchObject({
      outcome: "refused",
      note: "an interval of 1 week is not a year or a quarter, the periods a custom granularity may have"
    })
    // The model's rules for a granularity's name hold for an imported one.
    expect(line("orders.ordered_at.Quarter")).toMatchObject({
      outcome: "refused",
      note: "name: a custom granularity's name is lower_snake_case"
    })
  })

  it("never runs a JavaScript model: what is not a cube() or view() call of literal data is refused by its line", () => {
    expect(line("statement at line 44")).toEqual({
      file: "model/cubes/customers.js",
      line: 44,
      construct: "statement",
      name: "statement at line 44",
      outcome: "refused",
      note: "only cube() and view() calls are read; nothing else in a model file is run"
    })
    const computed = SemanticImport.importFiles("cube", [{
      path: "model/x.js",
      text: "cube(`x`, { sqlTable: `t`, measures: { n: { type: process.env.TYPE } } })\ncube(`y`, { sqlTable: `t` })\n"
    }])
    const report = Either.getOrThrow(computed).report
    expect(report[0]).toMatchObject({
      line: 1,
      name: "cube at line 1",
      outcome: "refused",
      note: "it is not data: a MemberExpression is computed, not data"
    })
    expect(Either.getOrThrow(computed).model.tables.map((t) => t.name)).toEqual(["y"])
    expect(
      Either.getLeft(
        SemanticImport.importFiles("cube", [{ path: "model/bad.js", text: "cube(`x`, {\n  sql: `a`,,\n})" }])
      )
    )
      .toMatchObject({ _tag: "Some", value: { file: "model/bad.js", line: 2 } })
  })
})

describe("SemanticImport: LookML", () => {
  const result = imported(filesUnder(path.join(fixtures, "lookml")), {}, "lookml")
  const model = Either.getOrThrow(SemanticModel.validate("semantic/shop.yaml", result.model))
  const line = (name: string) => result.report.find((l) => l.name === name)

  it("reads views and explores into tables, relationships, measures and derived metrics, each line of the report placed", () => {
    expect(model.file.name).toBe("shop")
    expect(model.tables.map((t) => t.name)).toEqual(["customers", "regions", "orders", "order_items"])
    expect(model.relationships.map((r) => `${r.left_table}->${r.right_table}`)).toEqual([
      "order_items->orders",
      "orders->customers",
      "customers->regions"
    ])
    const orders = model.tables.find((t) => t.name === "orders")!
    expect(orders.time_dimensions).toEqual([{ name: "ordered", expr: "ordered_at" }])
    expect(model.tables.find((t) => t.name === "customers")!.time_dimensions).toEqual([
      { name: "created", expr: "created_at", grains: ["day", "month", "year"], synonyms: ["Signup"] }
    ])
    expect(orders.filters).toEqual([
      { name: "orders_filter", expr: "status <> 'cancelled'" },
      // A pattern, as the DEMO's statuses allow: the agreement tests run its LIKE on each engine.
      { name: "revenue_filter", expr: "status NOT LIKE 'cancel%' ESCAPE '^'" }
    ])
    expect(model.measures.find((m) => m.name === "revenue")).toMatchObject({
      agg: "sum",
      expr: "line_total",
      format: "currency",
      filters: ["revenue_filter"]
    })
    expect(model.measures.find((m) => m.name === "p90_line")!.agg_params).toEqual({ percentile: 0.9 })
    expect(model.metrics).toEqual([{
      name: "average_order_value",
      type: "derived",
      expr: "revenue / NULLIF(orders, 0)",
      metrics: [{ name: "revenue" }, { name: "orders" }],
      synonyms: ["AOV"]
    }])
    // Two views' `count` stay two measures.
    expect(line("orders.count")).toMatchObject({
      outcome: "imported",
      note: "named orders_count: count is a measure of another view too"
    })
    expect(model.measures.some((m) => m.name === "order_items_count")).toBe(true)
    // The model's fiscal_month_offset starts the fiscal timeframes in April; a day of the week is not read.
    expect(model.file.custom_granularities).toEqual([
      { name: "fiscal_year", label: "Fiscal year", grain: "year", start_month: 4 },
      { name: "fiscal_quarter", label: "Fiscal quarter", grain: "quarter", start_month: 4 }
    ])
    expect(line("fiscal_year")).toMatchObject({ file: "shop.model.lkml", line: 3, outcome: "imported" })
    expect(line("orders.ordered")).toMatchObject({
      outcome: "approximated",
      note: "a time dimension by day and coarser (raw, day_of_week not read)"
    })
    expect(line("order_items.distinct_revenue")).toMatchObject({ line: 80, outcome: "refused" })
    expect(line("top_customers")).toMatchObject({ file: "views/customers.view.lkml", line: 37, outcome: "refused" })
    expect(result.report.every((l) => l.line !== undefined)).toBe(true)
  })

  it("reads Looker filter expressions as Looker does: names are alternatives, exclusions all hold, % and _ are wildcards", () => {
    const filtered = (expression: string) => {
      const project = imported(
        [{
          path: "views/orders.view.lkml",
          text: `view: orders {
  sql_table_name: shop.orders ;;
  dimension: status { sql: \${TABLE}.status ;; }
  dimension: total { type: number sql: \${TABLE}.total ;; }
  measure: picked { type: count filters: [status: "${expression}"] }
}
`
        }],
        {},
        "lookml"
      )
      return project.model.tables[0]!.filters?.[0]?.expr ?? project.report.find((l) => l.name === "orders.picked")!.note
    }
    expect(filtered("FOO%, -FOOD")).toBe("status LIKE 'FOO%' ESCAPE '^' AND status <> 'FOOD'")
    expect(filtered("web, NULL")).toBe("(status IS NULL OR status = 'web')")
    expect(filtered("-web, -mobile, -NULL")).toBe("status IS NOT NULL AND status NOT IN ('web', 'mobile')")
    expect(filtered("new_york")).toBe("status LIKE 'new_york' ESCAPE '^'")
    expect(filtered("new^_york, 100^%")).toBe("status IN ('new_york', '100%')")
    expect(filtered("-%test%")).toBe("status NOT LIKE '%test%' ESCAPE '^'")
    expect(filtered("-EMPTY")).toBe("status <> ''")
    // Ranges and dates are not strings to compare: the measure is refused, saying which filter.
    for (const range of ["[1, 10]", "5 to 10", "NOT 5", "last 7 days"]) {
      expect(filtered(range)).toBe("its filter on status is not a field and a Looker filter expression Sightline reads")
    }
  })

  it("names the file and line of LookML that does not parse", () => {
    expect(
      Either.getLeft(
        SemanticImport.importFiles("lookml", [{
          path: "views/x.view.lkml",
          text: "view: x {\n  dimension: y {\n  sql: a ;;\n}"
        }])
      )
    )
      .toMatchObject({ _tag: "Some", value: { file: "views/x.view.lkml", line: 4 } })
  })
})
