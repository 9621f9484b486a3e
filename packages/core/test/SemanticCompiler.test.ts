import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as SemanticCompiler from "../src/SemanticCompiler.js"
import * as SemanticModel from "../src/SemanticModel.js"
import type * as SemanticQuery from "../src/SemanticQuery.js"
import * as SemanticReading from "../src/SemanticReading.js"

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
      - { name: shipping, agg: sum, expr: shipping_fee, format: currency, unit: EUR }
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
custom_granularities:
  - { name: fiscal_quarter, grain: quarter, start_month: 2 }
  - { name: fiscal_year, grain: year, start_month: 4 }
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

const compile = (
  query: Parameters<typeof SemanticCompiler.compile>[1],
  dialect: SemanticCompiler.DialectName = "postgres"
) => SemanticCompiler.compile(model, query, dialect)

const failure = (query: Parameters<typeof SemanticCompiler.compile>[1]) =>
  Either.match(compile(query), { onLeft: (e) => e.message, onRight: () => "compiled" })

describe("SemanticCompiler.compile", () => {
  it("is deterministic and binds every value instead of writing it into the SQL", () => {
    const query: SemanticQuery.SemanticQuery = {
      metrics: ["revenue"],
      dimensions: ["channel"],
      filters: [{ dimension: "channel", operator: "in", values: ["online", "store' OR '1'='1"] }],
      time: { start: "2025-01-01", end: "2026-01-01" }
    }
    const first = Either.getOrThrow(compile(query))
    expect(Either.getOrThrow(compile(query))).toEqual(first)
    expect(first.sql).not.toContain("store'")
    expect(first.sql).not.toContain("2025-01-01")
    // A listed value's synonym is read as the value.
    expect(first.params).toEqual(expect.arrayContaining(["web", "store' OR '1'='1", "2025-01-01", "2026-01-01"]))
    expect(first.columns).toEqual([
      { name: "channel", kind: "dimension" },
      { name: "revenue", kind: "metric", format: undefined }
    ])
  })

  it("names a measure's format and unit on its column", () => {
    expect(Either.getOrThrow(compile({ metrics: ["shipping", "orders"] })).columns).toEqual([
      { name: "shipping", kind: "metric", format: "currency", unit: "EUR" },
      { name: "orders", kind: "metric" }
    ])
  })

  it("keeps one column per metric and per dimension, however often they are named", () => {
    const twice = Either.getOrThrow(
      compile({ metrics: ["revenue", "revenue"], dimensions: ["region", "customers.region"] })
    )
    expect(twice.columns.map((c) => c.name)).toEqual(["region", "revenue"])
    // Two tables' dimensions of one name stay two columns.
    const named = Either.getOrThrow(SemanticModel.parse(
      "m.yaml",
      [
        "name: m",
        "tables:",
        "  - { name: a, base_table: { table: a }, dimensions: [{ name: name }], measures: [{ name: n, agg: count }] }",
        "  - { name: b, base_table: { table: b }, dimensions: [{ name: name }] }",
        "relationships:",
        "  - { name: ab, left_table: a, right_table: b, relationship_columns: [{ left_column: b_id, right_column: id }] }"
      ].join("\n")
    ))
    const both = Either.getOrThrow(
      SemanticCompiler.compile(named, { metrics: ["n"], dimensions: ["a.name", "b.name"] }, "postgres")
    )
    expect(both.columns.map((c) => c.name)).toEqual(["name", "b_name", "n"])
  })

  it("reads time in the model's time zone, and writes each dialect's grain", () => {
    const pg = Either.getOrThrow(compile({ metrics: ["orders"], time: { grain: "month" } }))
    expect(pg.sql).toContain(
      "date_trunc('month', (CAST(\"orders\".\"t__ordered\" AS timestamptz) AT TIME ZONE 'Europe/Paris'))"
    )
    const my = Either.getOrThrow(compile({ metrics: ["orders"], time: { grain: "quarter" } }, "mysql"))
    expect(my.sql).toContain("CONVERT_TZ(`orders`.`t__ordered`, '+00:00', 'Europe/Paris')")
    expect(my.sql).toContain("INTERVAL QUARTER(")
    expect(my.sql).toContain("`shop`.`orders`")
  })

  it("groups by a custom granularity of the model, named by each period's first day", () => {
    const pg = Either.getOrThrow(compile({ metrics: ["orders"], time: { grain: "fiscal_quarter" } }))
    // The calendar's quarter of the day a month earlier, moved a month later: February to April.
    expect(pg.sql).toContain(
      "CAST((CAST(date_trunc('quarter', ((CAST(\"orders\".\"t__ordered\" AS timestamptz) AT TIME ZONE 'Europe/Paris') + INTERVAL '-1 month')) AS date) + INTERVAL '1 month') AS date) AS \"period_fiscal_quarter\""
    )
    expect(pg.reading.text).toContain("by fiscal quarter (from February)")
    expect(pg.reading.grain).toBe("fiscal_quarter")
    // Its standard grain is the dimension's to allow, and a name the model does not define is refused.
    expect(failure({ metrics: ["orders"], time: { grain: "fiscal_year" } })).toBe(
      "ordered cannot be read by fiscal_year: its grains are day, week, month, quarter"
    )
    expect(failure({ metrics: ["orders"], time: { grain: "fortnight" } })).toBe(
      "fortnight is not a grain of this model: its grains are day, week, month, quarter, year, fiscal_quarter, fiscal_year"
    )
  })

  it("keeps the row filter of a table on every table below it, as a bound client attribute", () => {
    const { sql } = Either.getOrThrow(compile({ metrics: ["revenue"] }))
    // Revenue never names customers, yet only lines of the caller's region's customers count.
    expect(sql).toContain("(region = _svc.client_attributes_json.region)")
    // Once under lines and once under orders (joined for the paid filter): each projection keeps it.
    expect(sql.match(/_svc\.client_attributes_json\.region/g)?.length).toBe(2)
    expect(sql).toContain("FROM \"shop\".\"order_lines\" AS \"b\") AS \"b\" WHERE \"b\".\"order_id\" IN (SELECT")
    // The organization's own members carry no client attributes, and are not filtered.
    expect(SemanticCompiler.rowFiltersFor("{}")).toBe(false)
    expect(SemanticCompiler.rowFiltersFor("{\"region\":\"EU\"}")).toBe(true)
    const unfiltered = Either.getOrThrow(
      SemanticCompiler.compile(model, { metrics: ["revenue"] }, "postgres", { rowFilters: false })
    )
    expect(unfiltered.sql).not.toContain("_svc.client_attributes_json")
  })

  it("refuses what it cannot read along many-to-one relationships, and names unknown things", () => {
    expect(failure({ metrics: ["orders"], dimensions: ["lines.amount"] })).toBe(
      "no dimension named lines.amount in model shop"
    )
    expect(failure({ metrics: ["turnover"] })).toBe("no metric named turnover in model shop")
    expect(failure({ metrics: ["orders"], segments: ["vip"] })).toBe("no filter named vip in model shop")
    expect(failure({ metrics: ["aov"], dimensions: ["region"], order: [{ by: "margin" }] }))
      .toBe("cannot order by margin: it is not one of region, aov")
    expect(failure({ metrics: ["revenue_yoy"] })).toBe(
      "metric revenue_yoy compares periods: give a time grain or a period"
    )
    expect(failure({ metrics: ["orders"], time: { grain: "year" } }))
      .toBe("ordered cannot be read by year: its grains are day, week, month, quarter")
    expect(failure({ metrics: ["orders"], time: { start: "2025-02-01", end: "2025-01-01" } }))
      .toBe("the period's start 2025-02-01 is not before its end 2025-01-01")
    const two = [{ start: "2024-01-01", end: "2024-04-01" }, { start: "2025-01-01", end: "2025-04-01" }]
    expect(failure({ metrics: ["orders"], time: { start: "2024-01-01", periods: two } }))
      .toBe("give one period (start, end) or several (periods), not both")
    expect(failure({ metrics: ["orders"], time: { periods: [two[0]!, { start: "2025-04-01", end: "2025-01-01" }] } }))
      .toBe("the period's start 2025-04-01 is not before its end 2025-01-01")
    expect(failure({ metrics: ["aov"], dimensions: ["region"], limit_per: { dimensions: ["channel"], limit: 2 } }))
      .toBe("cannot rank within channel: it is not one of region")
    expect(failure({ metrics: ["aov"], dimensions: ["region"], limit_per: { dimensions: ["region"], limit: 2 } }))
      .toBe("a ranking within groups needs a metric, and a dimension to rank besides the groups' own")
  })

  it("states its reading in words and as data", () => {
    const { reading } = Either.getOrThrow(compile({
      metrics: ["revenue", "aov"],
      dimensions: ["channel"],
      filters: [{ dimension: "region", operator: "=", values: ["North"] }],
      time: { start: "2025-01-01", end: "2026-01-01" },
      limit: 3
    }))
    expect(reading.text).toBe(
      "Top 3: Revenue (sum of amount, paid orders only) and Aov (revenue divided by orders) by channel in 2025, where region is North, highest first"
    )
    expect(reading).toMatchObject({ dimensions: ["channel"], period: "2025", order: "highest first", limit: 3 })
    expect(SemanticReading.periodWords("2025-03-01", "2025-04-01")).toBe("March 2025")
    expect(SemanticReading.periodWords("2025-04-01", "2025-07-01")).toBe("Q2 2025")
    expect(SemanticReading.periodWords("2025-01-05", "2025-02-10")).toBe("2025-01-05 to 2025-02-09")
    expect(SemanticReading.periodWords("2025-02-14", "2025-02-15")).toBe("on 2025-02-14")
    // A limit over an ascending order keeps the lowest rows, and says so.
    const bottom = Either.getOrThrow(compile({
      metrics: ["revenue"],
      dimensions: ["channel"],
      time: { start: "2025-02-14", end: "2025-02-15" },
      order: [{ by: "revenue", direction: "asc" }],
      limit: 2
    })).reading
    expect(bottom.text).toBe(
      "Bottom 2: Revenue (sum of amount, paid orders only) by channel on 2025-02-14, lowest first"
    )
  })
})

describe("SemanticCompiler.compile: lists", () => {
  it("lists the distinct values of dimensions from the table that reaches them all, in their order", () => {
    const compiled = Either.getOrThrow(compile({
      metrics: [],
      dimensions: ["region", "channel"],
      filters: [{ dimension: "channel", operator: "=", values: ["web"] }],
      limit: 50
    }))
    // Rooted at orders (which reaches customers), not customers (which reaches nothing).
    expect(compiled.sql).toMatch(/FROM \(SELECT [^\n]* FROM "shop"\."orders" AS "b"[^\n]*\) AS "orders"\n\s+LEFT JOIN/)
    expect(compiled.sql).toContain("GROUP BY \"customers\".\"d__region\", \"orders\".\"d__channel\"")
    expect(compiled.sql).toMatch(/ORDER BY "region" ASC, "channel" ASC\nLIMIT 50$/)
    expect(compiled.params).toContain("web")
    expect(compiled.columns).toEqual([{ name: "region", kind: "dimension" }, { name: "channel", kind: "dimension" }])
    expect(compiled.reading.text).toBe(
      "The first 50: Every region and channel of customers, where channel is web, in region order"
    )
    expect(compiled.reading.metrics).toEqual([])
  })

  it("needs a dimension to list, and no period", () => {
    expect(failure({ metrics: [] })).toBe("name a metric to measure, or a dimension to list")
    expect(failure({ metrics: [], dimensions: ["channel"], time: { grain: "month" } })).toBe(
      "a list of dimension values has no period or grain: name a metric to read by time"
    )
  })
})

describe("SemanticCompiler.verifiedSql", () => {
  it("reads logical tables through their projections and binds parameters after theirs", () => {
    const { params, sql } = Either.getOrThrow(
      SemanticCompiler.verifiedSql(model, model.verifiedQueries[0]!, { since: "2025-01-01" }, "postgres")
    )
    // The query's own WITH is merged with the projections', and its trailing semicolon dropped.
    expect(sql).toMatch(/^WITH "__lines" AS \(SELECT .*\),\n"__orders" AS \(SELECT .*\),\ntotals AS \(/s)
    expect(sql).toContain("WHERE o.ordered >= $1 GROUP BY o.channel)")
    expect(sql).toContain("LIMIT $2")
    expect(sql).not.toMatch(/;\s*$/)
    expect(params).toEqual(["2025-01-01", 5])
  })

  it("says which parameters are missing", () => {
    expect(
      Either.getLeft(SemanticCompiler.verifiedSql(model, model.verifiedQueries[0]!, {}, "postgres")).pipe(
        (e) => e._tag === "Some" ? e.value.message : ""
      )
    ).toBe("missing values for parameters: since")
  })

  it("compiles a verified semantic query (a dbt saved query) in the connector's dialect", () => {
    const saved = {
      name: "revenue_by_month",
      question: "Revenue by month?",
      query: { metrics: ["revenue"], time: { grain: "month" as const } }
    }
    const withSaved = Either.getOrThrow(SemanticModel.validate(model.path, {
      ...model.file,
      verified_queries: [...model.file.verified_queries!, saved]
    }))
    for (const dialect of ["postgres", "mysql", "duckdb"] as const) {
      expect(SemanticCompiler.verifiedSql(withSaved, withSaved.verifiedQueries[1]!, {}, dialect)).toEqual(
        SemanticCompiler.compile(withSaved, saved.query, dialect)
      )
    }
    expect(
      Either.getLeft(SemanticModel.validate(model.path, {
        ...model.file,
        verified_queries: [{ ...saved, sql: "SELECT 1" }, { ...saved, name: "p", parameters: [{ name: "x" }] }]
      })).pipe((problems) => problems._tag === "Some" ? problems.value.map((p) => p.message) : [])
    ).toEqual([
      "verified query revenue_by_month: give its sql or its query, one of them",
      "verified query p: a semantic query takes no parameters"
    ])
  })
})
