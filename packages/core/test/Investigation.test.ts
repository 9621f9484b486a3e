import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import { ConnectorId } from "../src/Ids.js"
import * as Investigation from "../src/Investigation.js"
import * as SemanticCompiler from "../src/SemanticCompiler.js"
import * as SemanticModel from "../src/SemanticModel.js"

const model = Either.getOrThrow(SemanticModel.parse(
  "semantic/shop.yaml",
  `name: shop
tables:
  - name: orders
    base_table: { table: orders }
    primary_key: { columns: [id] }
    dimensions:
      - name: channel
        values: [{ value: web }, { value: store }]
    time_dimensions: [{ name: ordered, expr: ordered_at }]
    measures:
      - { name: orders, agg: count }
      - { name: buyers, agg: count_distinct, expr: customer_id }
      - { name: basket, agg: avg, expr: amount }
  - name: lines
    base_table: { table: order_lines }
    measures:
      - { name: revenue, agg: sum, expr: amount, time_dimension: orders.ordered, drivers: [region, channel] }
  - name: customers
    base_table: { table: customers }
    dimensions:
      - name: region
        values: [{ value: Europe }, { value: Asia }]
      - { name: name }
relationships:
  - { name: lines_orders, left_table: lines, right_table: orders, relationship_columns: [{ left_column: order_id, right_column: id }] }
  - { name: orders_customers, left_table: orders, right_table: customers, relationship_columns: [{ left_column: customer_id, right_column: id }] }
metrics:
  - { name: aov, type: ratio, numerator: revenue, denominator: orders }
  - { name: revenue_share, type: share, measure: revenue }
`
))

const march = { start: "2025-03-01", end: "2025-04-01" }
const february = { start: "2025-02-01", end: "2025-03-01" }
const request = (fields: Partial<Investigation.InvestigationRequest>): Investigation.InvestigationRequest => ({
  connector_id: ConnectorId.make(1),
  metric: "revenue",
  period: march,
  compared_with: february,
  ...fields
})
const planOf = (fields: Partial<Investigation.InvestigationRequest>) =>
  Either.getOrThrow(Investigation.plan(model, request(fields)))
const refusal = (fields: Partial<Investigation.InvestigationRequest>) =>
  Either.match(Investigation.plan(model, request(fields)), { onLeft: (e) => e.message, onRight: () => "planned" })

describe("Investigation", () => {
  it("plans the totals in both periods, then the change by each of the metric's drivers, each step a query that compiles", () => {
    const plan = planOf({})
    expect(plan).toMatchObject({ kind: "change", split: "sum", measures: ["revenue"], drivers: ["region", "channel"] })
    expect(plan.steps.map((s) => [s.id, s.title, s.level])).toEqual([
      ["total", "Revenue in February 2025 and March 2025", 0],
      ["by_region", "By region", 1],
      ["by_channel", "By channel", 1]
    ])
    expect(plan.steps[1]!.query).toEqual({
      metrics: ["revenue"],
      dimensions: ["region"],
      time: { periods: [february, march] }
    })
    for (const step of plan.steps) {
      expect(Either.isRight(SemanticCompiler.compile(model, step.query, "mysql"))).toBe(true)
    }
    // A driver kept to one value holds all of the change: the next leads.
    expect(planOf({ filters: [{ dimension: "region", operator: "=", values: ["Europe"] }] }).drivers).toEqual([
      "channel"
    ])
    expect(planOf({ filters: [{ dimension: "region", operator: "in", values: ["Europe", "Asia"] }] }).drivers)
      .toEqual(["region", "channel"])
  })

  it("splits a ratio by its numerator and denominator, and takes the listed dimensions it reaches when none are declared", () => {
    const plan = planOf({ metric: "aov" })
    expect(plan).toMatchObject({ split: "ratio", measures: ["revenue", "orders"], drivers: ["channel", "region"] })
    // Orders reach customers, not lines: "orders" alone is not broken down by what only lines reach.
    expect(planOf({ metric: "orders", compared_with: undefined })).toMatchObject({
      kind: "contribution",
      drivers: ["channel", "region"]
    })
  })

  it("refuses what would not add up, drivers it cannot reach, and periods that overlap, saying why", () => {
    expect(refusal({ metric: "basket" })).toBe(
      "basket is not a sum, a count (or a distinct count of another table's rows) or a ratio of two of them: its " +
        "parts by a dimension would not add up to its change"
    )
    expect(refusal({ metric: "revenue_share" })).toContain("is not a sum, a count")
    // A distinct count of customers adds up along what a customer has one of (a region), not a channel.
    expect(planOf({ metric: "buyers" }).drivers).toEqual(["region"])
    expect(refusal({ metric: "margin" })).toBe("no metric named margin in model shop")
    expect(refusal({ drivers: ["planet"] })).toBe(
      "revenue cannot be broken down by planet: no many-to-one relationship leads there"
    )
    expect(refusal({ compared_with: { start: "2025-03-15", end: "2025-04-15" } })).toBe(
      "the periods compared overlap: name periods apart"
    )
  })

  it.effect("a cancelled investigation stops at its next step: nothing deeper starts", () =>
    Effect.gen(function*() {
      const plan = planOf({})
      const columns = [{ name: "region", kind: "dimension" }, { name: "period", kind: "time" }, {
        name: "revenue",
        kind: "metric"
      }]
      const started: Array<string> = []
      const blocked = yield* Deferred.make<void>()
      // The totals and the regions answer at once; the channels hang until the run is cancelled.
      const runStep = (step: Investigation.Step) =>
        Effect.gen(function*() {
          started.push(step.id)
          if (step.id === "by_channel") {
            yield* Deferred.succeed(blocked, undefined)
            return yield* Effect.never
          }
          const rows = [["Europe", "2025-02-01", 500], ["Europe", "2025-03-01", 300]]
          return { step, breakdown: Investigation.breakdown(plan, step, columns, rows) }
        })
      const fiber = yield* Effect.fork(Investigation.run(plan, runStep))
      yield* Deferred.await(blocked)
      yield* Fiber.interrupt(fiber)
      expect([...started].sort()).toEqual(["by_channel", "by_region", "total"])
      // Without the cancel, Europe by channel runs next.
      const all = yield* Investigation.run(plan, (step) =>
        Effect.succeed({
          step,
          breakdown: Investigation.breakdown(plan, step, columns, [["Europe", "2025-02-01", 500], [
            "Europe",
            "2025-03-01",
            300
          ]])
        }))
      expect(all.map((r) => r.step.id)).toContain("by_region_europe_by_channel")
    }))

  it("reads a step's rows as the change by its dimension, and drills into the value that drove it, to the depth asked", () => {
    const plan = planOf({})
    const byRegion = plan.steps[1]!
    const columns = [{ name: "region", kind: "dimension" }, { name: "period", kind: "time" }, {
      name: "revenue",
      kind: "metric"
    }]
    const breakdown = Investigation.breakdown(plan, byRegion, columns, [
      ["Europe", "2025-02-01", 500],
      ["Europe", "2025-03-01", 300],
      ["Asia", "2025-02-01", 200],
      ["Asia", "2025-03-01", 250]
    ])
    expect(breakdown).toMatchObject({ dimension: "region", before: 700, after: 550, change: -150 })
    expect(breakdown.parts.map((p) => [p.value, p.change])).toEqual([["Europe", -200], ["Asia", 50]])
    const deeper = Investigation.drill(plan, byRegion, breakdown)!
    expect(deeper).toMatchObject({
      id: "by_region_europe_by_channel",
      title: "Europe by channel",
      level: 2,
      within: [{ dimension: "region", value: "Europe" }],
      query: { dimensions: ["channel"], filters: [{ dimension: "region", operator: "=", values: ["Europe"] }] }
    })
    // Depth 2 (the default) ends there, and so do the drivers.
    expect(Investigation.drill(plan, deeper, breakdown)).toBeUndefined()
    expect(Investigation.drill(planOf({ depth: 1 }), byRegion, breakdown)).toBeUndefined()
  })

  it("says where the change is, as deep as each level's top value holds most of it, citing the steps, never why", () => {
    const plan = planOf({ depth: 2 })
    const columns = (dimension: string | undefined) => [
      ...(dimension === undefined ? [] : [{ name: dimension, kind: "dimension" }]),
      { name: "period", kind: "time" },
      { name: "revenue", kind: "metric" }
    ]
    const read = (step: Investigation.Step, rows: ReadonlyArray<ReadonlyArray<unknown>>): Investigation.Ran => ({
      step,
      cellId: `cell-${step.id}`,
      breakdown: Investigation.breakdown(plan, step, columns(step.dimension), rows)
    })
    const total = read(plan.steps[0]!, [["2025-02-01", 1000], ["2025-03-01", 800]])
    const byRegion = read(plan.steps[1]!, [
      ["Europe", "2025-02-01", 600],
      ["Europe", "2025-03-01", 420],
      ["Asia", "2025-02-01", 400],
      ["Asia", "2025-03-01", 380]
    ])
    const byChannel = read(plan.steps[2]!, [
      ["web", "2025-02-01", 500],
      ["web", "2025-03-01", 450],
      ["store", "2025-02-01", 500],
      ["store", "2025-03-01", 350]
    ])
    const deeper = Investigation.drill(plan, byRegion.step, byRegion.breakdown!)!
    // Europe's fall of 180 is mostly its stores'.
    const inEurope = read(deeper, [
      ["web", "2025-02-01", 300],
      ["web", "2025-03-01", 280],
      ["store", "2025-02-01", 300],
      ["store", "2025-03-01", 140]
    ])
    const found = Investigation.findings(plan, [total, byRegion, byChannel, inEurope])
    expect(found.summary).toBe(
      "Revenue fell 20% from February 2025 to March 2025 (1,000 to 800). 90% of the fall is in Europe, mostly " +
        "store (step by_region, step by_region_europe_by_channel). By channel, store has 75% of it (step by_channel). " +
        "These figures say where; the data does not say why."
    )
    expect(found.total).toEqual({ before: 1000, after: 800, change: -200, relative: -0.2 })
    expect(found.steps.map((s) => [s.id, s.cell_id, s.parts?.[0]?.value])).toEqual([
      ["total", "cell-total", null],
      ["by_region", "cell-by_region", "Europe"],
      ["by_channel", "cell-by_channel", "store"],
      ["by_region_europe_by_channel", "cell-by_region_europe_by_channel", "store"]
    ])
    // Each step carries its query, to run again and check.
    expect(found.steps[3]!.query.filters).toEqual([{ dimension: "region", operator: "=", values: ["Europe"] }])
  })

  it("at one time, reads a ratio's rows as each value's numerator against its denominator", () => {
    const plan = planOf({ metric: "aov", compared_with: undefined })
    expect(plan.steps[1]!.query.time).toEqual({ start: march.start, end: march.end })
    const breakdown = Investigation.breakdown(
      plan,
      plan.steps[1]!,
      [{ name: "channel", kind: "dimension" }, { name: "revenue", kind: "metric" }, { name: "orders", kind: "metric" }],
      [["web", 600, 10], ["store", 400, 20]]
    )
    expect(breakdown).toMatchObject({ kind: "ratio", change: 0, before: 1000 / 30, after: 1000 / 30 })
    expect(breakdown.parts.map((p) => [p.value, p.after])).toEqual([["web", 60], ["store", 20]])
  })
})
