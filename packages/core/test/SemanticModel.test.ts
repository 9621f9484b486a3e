import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as SemanticModel from "../src/SemanticModel.js"

const problemsOf = (text: string) =>
  Either.match(SemanticModel.parse("semantic/shop.yaml", text), {
    onLeft: (problems) => problems.map(SemanticModel.formatProblem),
    onRight: () => []
  })

const shop = `name: shop
tables:
  - name: orders
    base_table: { table: orders }
    dimensions:
      - { name: channel }
    time_dimensions:
      - { name: ordered, expr: ordered_at }
    measures:
      - { name: orders, agg: count }
`

describe("SemanticModel.parse", () => {
  it("reads a model and normalises it", () => {
    const model = Either.getOrThrow(SemanticModel.parse("semantic/shop.yaml", shop))
    expect(model.timeZone).toBe("UTC")
    expect(model.measures).toEqual([{ name: "orders", agg: "count", table: "orders" }])
  })

  it("names the file and line of a YAML error", () => {
    expect(problemsOf("name: shop\ntables:\n  - name: [unclosed\n")).toEqual([
      expect.stringMatching(/^semantic\/shop\.yaml:\d+: .*Flow sequence/)
    ])
  })

  it("names the file, line and path of a value the format refuses", () => {
    const problems = problemsOf(
      shop.replace("agg: count", "agg: mean").replace("{ name: channel }", "{ name: 2channel }")
    )
    expect(problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/^semantic\/shop\.yaml:6: tables\.0\.dimensions\.0\.name: .*letters, digits/),
      expect.stringMatching(/^semantic\/shop\.yaml:10: tables\.0\.measures\.0\.agg: /)
    ]))
  })

  it("refuses keys it does not know, so a typo is not silently ignored", () => {
    expect(problemsOf(shop.replace("agg: count", "agg: count, synonym: [x]"))).toEqual([
      expect.stringMatching(/^semantic\/shop\.yaml:10: tables\.0\.measures\.0\.synonym: is unexpected/)
    ])
  })

  it("finds duplicate names and references that do not resolve", () => {
    const broken = shop
      .replace("- { name: channel }", "- { name: channel }\n      - { name: ordered }")
      .replace(
        "- { name: orders, agg: count }",
        [
          "- { name: orders, agg: count, filters: [paid] }",
          "      - { name: revenue, agg: sum }",
          "      - { name: late, agg: count, time_dimension: shipped, unfiltered: visits }"
        ].join("\n")
      ) +
      [
        "relationships:",
        "  - { name: r, left_table: orders, right_table: customers, relationship_columns: [{ left_column: c, right_column: id }] }",
        "metrics:",
        "  - { name: aov, type: ratio, numerator: revenue, denominator: visits }",
        "  - { name: orders, type: share, measure: orders }",
        "verified_queries:",
        "  - { name: q, question: Q?, sql: select * from __payments }",
        "drivers: [channel, planet]"
      ].join("\n")
    expect(problemsOf(broken).sort()).toEqual([
      "semantic/shop.yaml: drivers: driver planet is not a dimension",
      "semantic/shop.yaml: measure late: its unfiltered measure visits is not another measure",
      "semantic/shop.yaml: measure late: no time dimension named shipped",
      "semantic/shop.yaml: measure orders: no filter named paid",
      "semantic/shop.yaml: measure revenue: a sum needs an expr",
      "semantic/shop.yaml: metric aov: no measure named visits",
      "semantic/shop.yaml: metric orders is defined twice (metric names are unique in a model)",
      "semantic/shop.yaml: relationship r: no table named customers",
      "semantic/shop.yaml: table orders: time dimension ordered clashes with the dimension ordered",
      "semantic/shop.yaml: verified query q: no table named payments"
    ])
  })

  it("checks the metric types MetricFlow adds: percentiles, semi-additive measures, derived, cumulative, conversion", () => {
    const model = shop.replace(
      "      - { name: orders, agg: count }",
      [
        "      - { name: orders, agg: count }",
        "      - { name: p90, agg: percentile, expr: amount }",
        "      - { name: share_median, agg: sum, expr: amount, agg_params: { percentile: 0.5 } }",
        "      - { name: balance, agg: sum, expr: amount, non_additive_dimension: { name: shipped } }",
        "      - { name: p200, agg: percentile, expr: amount, agg_params: { percentile: 2 } }"
      ].join("\n")
    ) + [
      "metrics:",
      "  - { name: a, type: derived, expr: b + orders, metrics: [{ name: b }, { name: orders }] }",
      "  - { name: b, type: derived, expr: a * 2, metrics: [{ name: a }] }",
      "  - { name: c, type: derived, expr: orders - before, metrics: [{ name: orders }, { name: orders, offset_window: 1 month }] }",
      "  - { name: d, type: derived, expr: orders + drop table, metrics: [{ name: orders }] }",
      "  - { name: e, type: derived, expr: system(orders), metrics: [{ name: orders }] }",
      "  - { name: f, type: cumulative, measure: visits, grain_to_date: month }",
      "  - { name: g, type: conversion, base_measure: orders, conversion_measure: payments, entity: customer_id }",
      "  - { name: h, type: cumulative, measure: orders, window: 1 fortnight }"
    ].join("\n")
    expect(problemsOf(model).sort()).toEqual([
      "semantic/shop.yaml:14: tables.0.measures.4.agg_params.percentile: a percentile is between 0 and 1 (0.9 is the 90th)",
      "semantic/shop.yaml:23: metrics.7.window: a window is a count and a unit: 7 days, 1 month, 1 year"
    ])
    const checked = problemsOf(model.replace("percentile: 2", "percentile: 0.2").replace(", window: 1 fortnight", ""))
    expect(checked.sort()).toEqual([
      "semantic/shop.yaml: measure balance: its non_additive_dimension shipped is not a time dimension",
      "semantic/shop.yaml: measure p90: a percentile needs agg_params.percentile (0.9 is the 90th)",
      "semantic/shop.yaml: measure share_median: agg_params are for a percentile or a median, not a sum",
      "semantic/shop.yaml: metric a is derived from itself",
      "semantic/shop.yaml: metric b is derived from itself",
      "semantic/shop.yaml: metric c: expr names before, which is not one of its metrics",
      "semantic/shop.yaml: metric c: two inputs go by one name: give each its own alias",
      "semantic/shop.yaml: metric d: expr: unexpected table after a whole expression",
      "semantic/shop.yaml: metric e: expr: system is not a function an expression may call",
      "semantic/shop.yaml: metric f: no measure named visits",
      "semantic/shop.yaml: metric g: no measure named payments"
    ])
  })

  it("checks custom granularities: unique, not a standard grain, a month to start in, and named where they are used", () => {
    const model = shop + [
      "custom_granularities:",
      "  - { name: fiscal_year, grain: year, start_month: 4 }",
      "  - { name: fiscal_year, grain: quarter, start_month: 4 }",
      "metrics:",
      "  - { name: fytd, type: cumulative, measure: orders, grain_to_date: fiscal_year }",
      "  - { name: half_to_date, type: cumulative, measure: orders, grain_to_date: fiscal_half }",
      "  - { name: since_half, type: derived, expr: orders - s, metrics: [{ name: orders }, { name: orders, alias: s, offset_to_grain: fiscal_half }] }",
      "  - { name: both, type: derived, expr: orders - s, metrics: [{ name: orders }, { name: orders, alias: s, offset_to_grain: month, offset_window: 1 day }] }",
      "  - { name: since_fy, type: derived, expr: orders - s, metrics: [{ name: orders }, { name: orders, alias: s, offset_to_grain: fiscal_year }] }"
    ].join("\n")
    expect(problemsOf(model).sort()).toEqual([
      "semantic/shop.yaml: custom granularity fiscal_year is defined twice",
      "semantic/shop.yaml: metric both: its input orders has an offset_window and an offset_to_grain: keep one",
      "semantic/shop.yaml: metric half_to_date: grain_to_date fiscal_half is not a grain or a custom granularity",
      "semantic/shop.yaml: metric since_half: its input orders's offset_to_grain fiscal_half is not a grain or a custom granularity"
    ])
    expect(problemsOf(shop + "custom_granularities:\n  - { name: month, grain: year, start_month: 13 }").sort())
      .toEqual([
        "semantic/shop.yaml:12: custom_granularities.0.name: month is a standard grain",
        "semantic/shop.yaml:12: custom_granularities.0.start_month: Expected a number between 1 and 12, actual 13"
      ])
  })

  it("loads a Snowflake Cortex Analyst model as it is: facts, aggregate metrics and filters", () => {
    const snowflake = `name: sales
tables:
  - name: orders
    base_table: { database: APP, schema: PUBLIC, table: ORDERS }
    primary_key: { columns: [order_id] }
    dimensions:
      - { name: status, expr: status, data_type: TEXT, is_enum: true, sample_values: [paid, refunded] }
    time_dimensions:
      - { name: ordered_at, expr: created_at, data_type: TIMESTAMP, synonyms: [order date] }
    facts:
      - { name: amount, expr: total_cents / 100.0, data_type: NUMBER }
    metrics:
      - { name: revenue, expr: SUM(orders.amount), synonyms: [sales, GMV] }
      - { name: buyers, expr: COUNT(DISTINCT customer_id) }
      - { name: order_count, expr: count(*) }
    filters:
      - { name: paid, expr: status = 'paid' }
verified_queries:
  - name: rev_by_month
    question: Revenue by month
    verified_by: ana
    verified_at: 1767225600
    use_as_onboarding_question: true
    sql: SELECT DATE_TRUNC('month', ordered_at), SUM(amount) FROM __orders GROUP BY 1
custom_instructions: Round money to cents.
`
    const model = Either.getOrThrow(SemanticModel.parse("semantic/sales.yaml", snowflake))
    expect(model.measures).toEqual([
      { name: "revenue", agg: "sum", expr: "amount", synonyms: ["sales", "GMV"], table: "orders" },
      { name: "buyers", agg: "count_distinct", expr: "customer_id", table: "orders" },
      { name: "order_count", agg: "count", table: "orders" }
    ])
    expect(model.verifiedQueries[0]!.verified_at).toBe(1767225600)
  })

  it("refuses a Snowflake metric that is not one aggregate", () => {
    expect(problemsOf(shop.replace(
      "measures:\n      - { name: orders, agg: count }",
      "metrics:\n      - { name: margin, expr: SUM(a) - SUM(b) }"
    ))).toEqual(["semantic/shop.yaml: table orders: metric margin: its expr must be one aggregate such as SUM(amount)"])
  })
})
