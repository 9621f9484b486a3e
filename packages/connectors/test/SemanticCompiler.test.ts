/**
 * The semantic compiler against SQL written by hand, on the DEMO dataset in each engine it runs on:
 * PGlite (the DEMO connector itself), PostgreSQL and MariaDB (the same generated rows loaded into
 * each), and DuckDB (a FILES connector of the same rows uploaded as Parquet files). Every comparison
 * runs both through the connector runtime, as answers do.
 */
import { afterAll, beforeAll, describe, expect, it, type Vitest } from "@effect/vitest"
import * as AssetStore from "@sightline/core/AssetStore"
import * as Connector from "@sightline/core/Connector"
import { ConnectorFiles } from "@sightline/core/ConnectorFiles"
import { ConnectorRuntime } from "@sightline/core/ConnectorRuntime"
import type * as Decomposition from "@sightline/core/Decomposition"
import { ConnectorId, MemberId, OrganizationId } from "@sightline/core/Ids"
import * as Investigation from "@sightline/core/Investigation"
import * as SemanticCompiler from "@sightline/core/SemanticCompiler"
import * as SemanticModel from "@sightline/core/SemanticModel"
import * as SemanticProbes from "@sightline/core/SemanticProbes"
import type * as SemanticQuery from "@sightline/core/SemanticQuery"
import * as Transaction from "@sightline/core/Transaction"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import mysql from "mysql2/promise"
import * as fs from "node:fs"
import * as os from "node:os"
import * as NodePath from "node:path"
import * as DemoDataset from "../src/DemoDataset.js"
import * as DemoModel from "../src/DemoModel.js"
import * as FilesConnector from "../src/FilesConnector.js"
import * as Runtime from "../src/Runtime.js"
import { metricTypes } from "./utils/metricTypes.js"
import { admin, localSuperuserAccess, settingsFor, url as postgresUrl } from "./utils/postgres.js"

const at = DateTime.unsafeMake(Date.UTC(2026, 0, 1))
const lastYear = new Date().getUTCFullYear() - 1
const script = DemoDataset.retail(lastYear)
const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 10)
const schemaName = `sl_semantic_${suffix}`

const record = (config: Connector.ConnectorConfig) =>
  new Connector.ConnectorRecord({
    id: ConnectorId.make(1),
    organization_id: OrganizationId.make(crypto.randomUUID()),
    owner_id: MemberId.make(crypto.randomUUID()),
    config,
    allow_sql_write_operations: false,
    include_db_session_metadata: false,
    created_at: at,
    updated_at: at
  })

const modelIn = (schema: string, extra: (yaml: string) => string = (y) => y) =>
  Either.getOrThrow(
    SemanticModel.parse(DemoModel.path, extra(DemoModel.yaml.replaceAll("schema: public,", `schema: ${schema},`)))
  )

type Row = ReadonlyArray<unknown>

/** The engines: a connector, its dialect, the model over its tables, and how to run SQL by hand. */
interface Engine {
  readonly name: string
  readonly connector: Connector.ConnectorRecord
  readonly dialect: SemanticCompiler.DialectName
  readonly schema: string
}

const byKey = (rows: ReadonlyArray<Row>): Record<string, ReadonlyArray<number>> =>
  Object.fromEntries(rows.map((row) => [String(row[0]), row.slice(1).map((v) => v === null ? NaN : Number(v))]))

const expectSameNumbers = (
  actual: Record<string, ReadonlyArray<number>>,
  expected: Record<string, ReadonlyArray<number>>
) => {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort())
  for (const [key, values] of Object.entries(expected)) {
    values.forEach((value, i) => expect(actual[key]![i]).toBeCloseTo(value, 6))
  }
}

const suite = (it: Vitest.MethodsNonLive<ConnectorRuntime>, engine: () => Engine) => {
  const run = (sql: string, params: ReadonlyArray<string | number | boolean | null> = [], attributes = "{}") =>
    Effect.gen(function*() {
      const runtime = yield* ConnectorRuntime
      return yield* runtime.query(engine().connector, {
        sql,
        params,
        clientAttributesJson: attributes,
        maxRows: 200_000,
        timeoutMillis: 60_000
      })
    })
  const semantic = (query: SemanticQuery.SemanticQuery, model?: SemanticModel.SemanticModel, attributes = "{}") =>
    Effect.gen(function*() {
      const compiled = Either.getOrThrow(
        SemanticCompiler.compile(model ?? modelIn(engine().schema), query, engine().dialect)
      )
      const result = yield* run(compiled.sql, compiled.params, attributes)
      return { compiled, result }
    })
  const t = (name: string) => `${engine().schema}.${name}`
  /** The model with a row filter on regions: a key's `region` attribute names the one it sees. */
  const byRegion = () =>
    modelIn(
      engine().schema,
      (yaml) =>
        yaml.replace(
          "base_table: { schema: " + engine().schema + ", table: regions }",
          "base_table: { schema: " + engine().schema +
            ", table: regions }\n    row_filter: code = _svc.client_attributes_json.region"
        )
    )

  metricTypes(it, {
    dialect: () => engine().dialect,
    schema: () => engine().schema,
    model: (extra) => modelIn(engine().schema, extra),
    run: (sql, params) => run(sql, params)
  })

  it.effect("revenue by channel: the model's revenue is the hand-written sum, cancelled orders excluded", () =>
    Effect.gen(function*() {
      const { compiled, result } = yield* semantic({ metrics: ["revenue"], dimensions: ["channel"] })
      const hand = yield* run(
        `SELECT o.channel, SUM(i.line_total) FROM ${t("order_items")} i JOIN ${t("orders")} o ON o.id = i.order_id
         WHERE o.status <> 'cancelled' GROUP BY o.channel`
      )
      expectSameNumbers(byKey(result.rows), byKey(hand.rows))
      expect(result.rows.map((r) => r[0])).toEqual(["web", "store", "partner"])
      expect(compiled.reading.text).toBe(
        "Revenue (sum of order line totals after discounts, cancelled orders excluded) by channel, over all time, highest first"
      )
    }))

  it.effect("the fan trap: orders and their lines' revenue by channel each count once", () =>
    Effect.gen(function*() {
      const { result } = yield* semantic({ metrics: ["all_orders", "revenue"], dimensions: ["channel"] })
      const orders = byKey((yield* run(`SELECT channel, COUNT(*) FROM ${t("orders")} GROUP BY channel`)).rows)
      const revenue = byKey(
        (yield* run(
          `SELECT o.channel, SUM(i.line_total) FROM ${t("order_items")} i JOIN ${t("orders")} o ON o.id = i.order_id
         WHERE o.status <> 'cancelled' GROUP BY o.channel`
        )).rows
      )
      const expected = Object.fromEntries(Object.keys(orders).map((k) => [k, [orders[k]![0]!, revenue[k]![0]!]]))
      expectSameNumbers(byKey(result.rows), expected)
      // Joined naively, each order counts once per line: the trap is real in this data.
      const naive = byKey(
        (yield* run(
          `SELECT o.channel, COUNT(*) FROM ${t("orders")} o JOIN ${
            t("order_items")
          } i ON i.order_id = o.id GROUP BY o.channel`
        )).rows
      )
      expect(naive["web"]![0]).toBeGreaterThan(orders["web"]![0]! * 1.2)
    }))

  it.effect("the chasm trap: revenue and refunds by category, two facts through one dimension", () =>
    Effect.gen(function*() {
      const { result } = yield* semantic({ metrics: ["revenue", "refunds"], dimensions: ["category"] })
      const revenue = byKey(
        (yield* run(
          `SELECT c.name, SUM(i.line_total) FROM ${t("order_items")} i JOIN ${t("orders")} o ON o.id = i.order_id
         JOIN ${t("products")} p ON p.id = i.product_id JOIN ${t("categories")} c ON c.id = p.category_id
         WHERE o.status <> 'cancelled' GROUP BY c.name`
        )).rows
      )
      const refunds = byKey(
        (yield* run(
          `SELECT c.name, SUM(r.refund_amount) FROM ${t("returns")} r JOIN ${
            t("order_items")
          } i ON i.id = r.order_item_id
         JOIN ${t("products")} p ON p.id = i.product_id JOIN ${
            t("categories")
          } c ON c.id = p.category_id GROUP BY c.name`
        )).rows
      )
      const expected = Object.fromEntries(Object.keys(revenue).map((k) => [k, [revenue[k]![0]!, refunds[k]![0]!]]))
      expectSameNumbers(byKey(result.rows), expected)
    }))

  it.effect("ratios divide totals; shares add up to one", () =>
    Effect.gen(function*() {
      const aov = yield* semantic({ metrics: ["average_order_value"], dimensions: ["channel"] })
      const hand = byKey(
        (yield* run(
          `SELECT o.channel, SUM(i.line_total) / COUNT(DISTINCT o.id) FROM ${t("order_items")} i
         JOIN ${t("orders")} o ON o.id = i.order_id WHERE o.status <> 'cancelled' GROUP BY o.channel`
        )).rows
      )
      expectSameNumbers(byKey(aov.result.rows), hand)
      const rate = yield* semantic({ metrics: ["return_rate"], dimensions: ["category"] })
      const handRate = byKey(
        (yield* run(
          `SELECT c.name, COUNT(r.id) * 1e0 / COUNT(*) FROM ${t("order_items")} i JOIN ${
            t("orders")
          } o ON o.id = i.order_id
         JOIN ${t("products")} p ON p.id = i.product_id JOIN ${t("categories")} c ON c.id = p.category_id
         LEFT JOIN ${t("returns")} r ON r.order_item_id = i.id WHERE o.status <> 'cancelled' GROUP BY c.name`
        )).rows
      )
      expectSameNumbers(byKey(rate.result.rows), handRate)
      const share = yield* semantic({ metrics: ["revenue", "revenue_share"], dimensions: ["region"] })
      const total = share.result.rows.reduce((sum, row) => sum + Number(row[1]), 0)
      for (const row of share.result.rows) expect(Number(row[2])).toBeCloseTo(Number(row[1]) / total, 9)
      expect(share.result.rows.reduce((sum, row) => sum + Number(row[2]), 0)).toBeCloseTo(1, 9)
    }))

  /** The revenue lines of orders that were not cancelled, with when they were ordered (UTC). */
  const revenueLines = Effect.map(
    Effect.suspend(() =>
      run(
        `SELECT o.ordered_at, i.line_total FROM ${t("order_items")} i JOIN ${t("orders")} o ON o.id = i.order_id
         WHERE o.status <> 'cancelled'`
      )
    ),
    (result) =>
      result.rows.map((row) => {
        const text = String(row[0])
        return {
          at: new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text.replace(" ", "T")}Z`),
          total: Number(row[1])
        }
      })
  )

  it.effect("every grain and period over period, against the lines bucketed by hand", () =>
    Effect.gen(function*() {
      const lines = yield* revenueLines
      const bucket = (date: Date, grain: SemanticModel.Grain): string => {
        const y = date.getUTCFullYear()
        const m = date.getUTCMonth()
        const day = (d: Date) => d.toISOString().slice(0, 10)
        switch (grain) {
          case "day":
            return day(date)
          case "week":
            return day(new Date(Date.UTC(y, m, date.getUTCDate() - ((date.getUTCDay() + 6) % 7))))
          case "month":
            return day(new Date(Date.UTC(y, m, 1)))
          case "quarter":
            return day(new Date(Date.UTC(y, m - (m % 3), 1)))
          case "year":
            return `${y}-01-01`
        }
      }
      const start = `${lastYear}-01-01`
      const end = `${lastYear + 1}-01-01`
      for (const grain of SemanticModel.grains) {
        const expected: Record<string, Array<number>> = {}
        for (const line of lines) {
          if (line.at < new Date(start) || line.at >= new Date(end)) continue
          const key = bucket(line.at, grain)
          expected[key] = [(expected[key]?.[0] ?? 0) + line.total]
        }
        const { result } = yield* semantic({ metrics: ["revenue"], time: { grain, start, end } })
        expectSameNumbers(byKey(result.rows), expected)
      }
      const growth = yield* semantic({ metrics: ["revenue", "revenue_growth"], time: { grain: "quarter", start, end } })
      for (const row of growth.result.rows) {
        const quarter = new Date(`${String(row[0])}T00:00:00Z`)
        const before = new Date(Date.UTC(quarter.getUTCFullYear() - 1, quarter.getUTCMonth(), 1))
        const previous = lines.filter((l) => bucket(l.at, "quarter") === bucket(before, "quarter"))
          .reduce((sum, l) => sum + l.total, 0)
        expect(Number(row[2])).toBeCloseTo((Number(row[1]) - previous) / previous, 9)
      }
      expect(growth.compiled.reading.text).toContain("by quarter in " + lastYear)
    }))

  it.effect("several periods read as one row each, or each by its months; nothing between them is read", () =>
    Effect.gen(function*() {
      const lines = yield* revenueLines
      const sum = (from: string, to: string) =>
        lines.filter((l) => l.at >= new Date(from) && l.at < new Date(to)).reduce((s, l) => s + l.total, 0)
      const periods = [
        { start: `${lastYear - 1}-01-01`, end: `${lastYear - 1}-04-01` },
        { start: `${lastYear}-01-01`, end: `${lastYear}-04-01` }
      ]
      const { compiled, result } = yield* semantic({ metrics: ["revenue"], time: { periods } })
      expectSameNumbers(
        byKey(result.rows.map((row) => [String(row[0]).slice(0, 10), row[1]])),
        Object.fromEntries(periods.map((p) => [p.start, [sum(p.start, p.end)]]))
      )
      expect(result.rows.map((row) => String(row[0]).slice(0, 10))).toEqual(periods.map((p) => p.start))
      expect(compiled.reading.text).toContain(`by period in Q1 ${lastYear - 1} and Q1 ${lastYear}`)
      const monthly = yield* semantic({ metrics: ["revenue"], time: { grain: "month", periods } })
      expect(monthly.result.rows.map((row) => String(row[0]).slice(0, 7))).toEqual(
        [lastYear - 1, lastYear].flatMap((y) => ["01", "02", "03"].map((m) => `${y}-${m}`))
      )
      expect(monthly.result.rows.reduce((s, row) => s + Number(row[1]), 0)).toBeCloseTo(
        periods.reduce((s, p) => s + sum(p.start, p.end), 0),
        4
      )
    }))

  it.effect("a product's attributes: its list price, launch date and category, beside its name", () =>
    Effect.gen(function*() {
      const hand = (yield* run(
        `SELECT p.name, p.unit_price, p.launched_on, c.name FROM ${t("products")} p
         JOIN ${t("categories")} c ON c.id = p.category_id ORDER BY p.id LIMIT 1`
      )).rows[0]!
      const { compiled, result } = yield* semantic({
        metrics: [],
        dimensions: ["product", "list_price", "launch_date", "category"],
        filters: [{ dimension: "product", operator: "=", values: [String(hand[0])] }]
      })
      expect(result.rows).toHaveLength(1)
      const [name, price, launched, category] = result.rows[0]!
      expect([name, Number(price), category]).toEqual([hand[0], Number(hand[1]), hand[3]])
      expect(String(launched).slice(0, 10)).toBe(String(hand[2]).slice(0, 10))
      expect(compiled.reading.text).toMatch(/^Every product and list price and launch date and category/)
    }))

  it.effect("a ranking within groups keeps each group's first rows; a share is still of all rows", () =>
    Effect.gen(function*() {
      const all = (yield* semantic({ metrics: ["revenue"], dimensions: ["region", "category"] })).result.rows
      const { compiled, result } = yield* semantic({
        metrics: ["revenue", "revenue_share"],
        dimensions: ["region", "category"],
        limit_per: { dimensions: ["region"], limit: 2 }
      })
      const total = all.reduce((s, row) => s + Number(row[2]), 0)
      const expected = [...new Set(all.map((row) => String(row[0])))].sort().flatMap((region) =>
        all.filter((row) => row[0] === region).sort((a, b) => Number(b[2]) - Number(a[2])).slice(0, 2)
      )
      expect(result.rows.map((row) => [row[0], row[1]])).toEqual(expected.map((row) => [row[0], row[1]]))
      for (const [i, row] of result.rows.entries()) {
        expect(Number(row[2])).toBeCloseTo(Number(expected[i]![2]), 6)
        expect(Number(row[3])).toBeCloseTo(Number(row[2]) / total, 9)
      }
      expect(compiled.reading.text).toMatch(/^Top 2 category in each region: Revenue/)
      const bottom = yield* semantic({
        metrics: ["units"],
        dimensions: ["channel", "product"],
        order: [{ by: "units", direction: "asc" }],
        limit_per: { dimensions: ["channel"], limit: 1 }
      })
      expect(bottom.result.rows.map((row) => row[0])).toEqual(["partner", "store", "web"])
      expect(bottom.compiled.reading.text).toMatch(/^Bottom 1 product in each channel: /)
    }))

  it.effect("customers who bought both: only those with order lines in each value, then all of their rows", () =>
    Effect.gen(function*() {
      const both = { entity: "customers", dimension: "category", values: ["laptop", "Phones"] }
      const { compiled, result } = yield* semantic({ metrics: ["buying_customers", "revenue"], having_each: both })
      const bought = (category: string) =>
        `o.customer_id IN (SELECT o2.customer_id FROM ${t("order_items")} i2 JOIN ${
          t("orders")
        } o2 ON o2.id = i2.order_id
           JOIN ${t("products")} p ON p.id = i2.product_id JOIN ${t("categories")} ca ON ca.id = p.category_id
           WHERE ca.name = '${category}')`
      const hand = yield* run(
        `SELECT COUNT(DISTINCT o.customer_id), SUM(i.line_total) FROM ${t("order_items")} i
         JOIN ${t("orders")} o ON o.id = i.order_id
         WHERE o.status <> 'cancelled' AND ${bought("Laptops")} AND ${bought("Phones")}`
      )
      const [customers, revenue] = hand.rows[0]!.map(Number)
      expect(customers).toBeGreaterThan(0)
      expect(Number(result.rows[0]![0])).toBe(customers)
      expect(Number(result.rows[0]![1])).toBeCloseTo(revenue!, 4)
      // Fewer than bought either.
      const laptops = yield* run(
        `SELECT COUNT(DISTINCT o.customer_id) FROM ${t("orders")} o WHERE o.status <> 'cancelled' AND ${
          bought("Laptops")
        }`
      )
      expect(customers).toBeLessThan(Number(laptops.rows[0]![0]))
      expect(compiled.reading.filters).toEqual([
        "customers have order items in category Laptops and in category Phones"
      ])
      // Under a key's row filter, only its region's customers, and only their lines count as bought.
      const model = byRegion()
      const eu = yield* semantic({ metrics: ["buying_customers"], having_each: both }, model, "{\"region\":\"EU\"}")
      const handEu = yield* run(
        `SELECT COUNT(DISTINCT o.customer_id) FROM ${t("orders")} o JOIN ${t("customers")} c ON c.id = o.customer_id
         JOIN ${t("regions")} r ON r.id = c.region_id
         WHERE o.status <> 'cancelled' AND r.code = 'EU' AND ${bought("Laptops")} AND ${bought("Phones")}`
      )
      expect(Number(eu.result.rows[0]![0])).toBe(Number(handEu.rows[0]![0]))
      expect(Number(handEu.rows[0]![0])).toBeLessThan(customers!)
      // A customer has one region: none is in two.
      const refused = SemanticCompiler.compile(
        modelIn(engine().schema),
        { metrics: ["revenue"], having_each: { entity: "customers", dimension: "region", values: ["Europe", "Asia"] } },
        engine().dialect
      )
      expect(Either.isLeft(refused) && refused.left.message).toMatch(/each of the customers has one region/)
    }))

  it.effect("an investigation's parts add up to each change, for every metric and driver, and match SQL by hand", () =>
    Effect.gen(function*() {
      const model = modelIn(engine().schema)
      const years = {
        period: { start: `${lastYear}-01-01`, end: `${lastYear + 1}-01-01` },
        compared_with: { start: `${lastYear - 1}-01-01`, end: `${lastYear}-01-01` }
      }
      const breakdownOf = (plan: Investigation.Plan, step: Investigation.Step) =>
        Effect.map(
          semantic(step.query),
          ({ compiled, result }) => Investigation.breakdown(plan, step, compiled.columns, result.rows)
        )
      const addsUp = (breakdown: Decomposition.Breakdown) =>
        expect(breakdown.parts.reduce((t, p) => t + p.change, 0)).toBeCloseTo(breakdown.change, 6)
      let checked = 0
      for (const metric of [...model.measures, ...model.metrics].map((m) => m.name)) {
        const planned = Investigation.plan(model, { connector_id: ConnectorId.make(1), metric, ...years })
        if (Either.isLeft(planned)) {
          expect(planned.left.message).toMatch(/is not a sum, a count \(or a distinct count/)
          continue
        }
        const plan = planned.right
        const total = yield* breakdownOf(plan, plan.steps[0]!)
        for (const step of plan.steps.slice(1)) {
          const breakdown = yield* breakdownOf(plan, step)
          expect(breakdown.before).toBeCloseTo(total.before, 6)
          expect(breakdown.after).toBeCloseTo(total.after, 6)
          addsUp(breakdown)
          const deeper = Investigation.drill(plan, step, breakdown)
          if (deeper !== undefined) {
            const within = yield* breakdownOf(plan, deeper)
            addsUp(within)
            if (plan.split === "sum") expect(within.change).toBeCloseTo(breakdown.parts[0]!.change, 6)
          }
          checked++
        }
      }
      expect(checked).toBeGreaterThan(20)
      // Revenue's change by region, against the sums written by hand.
      const plan = Either.getOrThrow(
        Investigation.plan(model, {
          connector_id: ConnectorId.make(1),
          metric: "revenue",
          drivers: ["region"],
          ...years
        })
      )
      const byRegion = yield* breakdownOf(plan, plan.steps[1]!)
      const hand = (yield* run(
        `SELECT r.name, SUM(CASE WHEN o.ordered_at < '${lastYear}-01-01' THEN i.line_total ELSE 0 END),
           SUM(CASE WHEN o.ordered_at >= '${lastYear}-01-01' THEN i.line_total ELSE 0 END)
         FROM ${t("order_items")} i JOIN ${t("orders")} o ON o.id = i.order_id JOIN ${
          t("customers")
        } c ON c.id = o.customer_id
         JOIN ${t("regions")} r ON r.id = c.region_id
         WHERE o.status <> 'cancelled' AND o.ordered_at >= '${lastYear - 1}-01-01' AND o.ordered_at < '${
          lastYear + 1
        }-01-01'
         GROUP BY r.name`
      )).rows
      expect(byRegion.parts).toHaveLength(hand.length)
      for (const [region, before, after] of hand) {
        const part = byRegion.parts.find((p) => p.value === region)!
        expect(part.before).toBeCloseTo(Number(before), 6)
        expect(part.change).toBeCloseTo(Number(after) - Number(before), 6)
      }
      // The return rate's parts: each category's own rate in each year.
      const rates = Either.getOrThrow(
        Investigation.plan(model, { connector_id: ConnectorId.make(1), metric: "return_rate", ...years })
      )
      expect(rates.drivers[0]).toBe("category")
      const byCategory = yield* breakdownOf(rates, rates.steps[1]!)
      const handRates = (yield* run(
        `SELECT ca.name, COUNT(rt.id) * 1e0 / COUNT(*) FROM ${t("order_items")} i JOIN ${
          t("orders")
        } o ON o.id = i.order_id
         JOIN ${t("products")} p ON p.id = i.product_id JOIN ${t("categories")} ca ON ca.id = p.category_id
         LEFT JOIN ${t("returns")} rt ON rt.order_item_id = i.id
         WHERE o.status <> 'cancelled' AND o.ordered_at >= '${lastYear}-01-01' AND o.ordered_at < '${
          lastYear + 1
        }-01-01'
         GROUP BY ca.name`
      )).rows
      for (const [category, rate] of handRates) {
        expect(byCategory.parts.find((p) => p.value === category)!.after).toBeCloseTo(Number(rate), 9)
      }
    }))

  it.effect("each additive measure by each dimension it reaches adds up to its total", () =>
    Effect.gen(function*() {
      const model = modelIn(engine().schema)
      const dimensions = ["channel", "status", "product_line", "category", "segment", "region", "return_reason"]
      let compared = 0
      for (const measure of model.measures.filter((m) => m.agg === "sum" || m.agg === "count")) {
        const total = (yield* semantic({ metrics: [measure.name] })).result.rows[0]![0]
        for (const dimension of dimensions) {
          const compiled = SemanticCompiler.compile(
            model,
            { metrics: [measure.name], dimensions: [dimension] },
            engine().dialect
          )
          if (Either.isLeft(compiled)) {
            expect(compiled.left.message).toMatch(/no many-to-one relationship leads/)
            continue
          }
          const rows = (yield* run(compiled.right.sql, compiled.right.params)).rows
          expect(rows.reduce((sum, row) => sum + Number(row[1] ?? 0), 0)).toBeCloseTo(Number(total), 4)
          compared++
        }
      }
      expect(compared).toBeGreaterThan(30)
    }))

  it.effect("a region's abbreviation reads as the region; a segment limits the rows", () =>
    Effect.gen(function*() {
      const apac = yield* semantic({
        metrics: ["revenue"],
        filters: [{ dimension: "region", operator: "=", values: ["APAC"] }]
      })
      const hand = yield* run(
        `SELECT SUM(i.line_total) FROM ${t("order_items")} i JOIN ${t("orders")} o ON o.id = i.order_id
         JOIN ${t("customers")} c ON c.id = o.customer_id JOIN ${t("regions")} r ON r.id = c.region_id
         WHERE o.status <> 'cancelled' AND r.code = 'APAC'`
      )
      expect(Number(apac.result.rows[0]![0])).toBeCloseTo(Number(hand.rows[0]![0]), 6)
      expect(apac.compiled.reading.filters).toEqual(["region is Asia Pacific"])
      const emea = yield* semantic({ metrics: ["customers"], segments: ["emea"] })
      const handEmea = yield* run(
        `SELECT COUNT(*) FROM ${t("customers")} c JOIN ${
          t("regions")
        } r ON r.id = c.region_id WHERE r.code IN ('EU', 'MEA')`
      )
      expect(Number(emea.result.rows[0]![0])).toBe(Number(handEmea.rows[0]![0]))
    }))

  it.effect("every probe a change's check runs plans on the engine (verified queries where they are its dialect)", () =>
    Effect.gen(function*() {
      const model = modelIn(engine().schema)
      const probes = SemanticProbes.probes(model, engine().dialect)
        .filter((probe) => engine().dialect === "postgres" || probe.reads === undefined)
      expect(probes.length).toBeGreaterThan(60)
      const failures: Array<string> = []
      for (const probe of probes) {
        const planned = yield* Effect.either(run(`EXPLAIN ${probe.sql}`, probe.params))
        if (probe.error !== undefined || planned._tag === "Left") {
          failures.push(`${probe.subject}: ${probe.error ?? (planned._tag === "Left" ? planned.left.message : "")}`)
        }
      }
      expect(failures).toEqual([])
    }))

  it.effect("a row filter on regions limits revenue to the caller's region, whatever is asked", () =>
    Effect.gen(function*() {
      const model = byRegion()
      const eu = yield* semantic({ metrics: ["revenue", "orders"] }, model, "{\"region\":\"EU\"}")
      const hand = yield* run(
        `SELECT SUM(i.line_total), COUNT(DISTINCT o.id) FROM ${t("order_items")} i JOIN ${
          t("orders")
        } o ON o.id = i.order_id
         JOIN ${t("customers")} c ON c.id = o.customer_id JOIN ${t("regions")} r ON r.id = c.region_id
         WHERE o.status <> 'cancelled' AND r.code = 'EU'`
      )
      expect(eu.result.rows[0]!.map(Number)).toEqual(hand.rows[0]!.map(Number))
      const byChannel = yield* semantic({ metrics: ["revenue"], dimensions: ["channel"] }, model, "{\"region\":\"EU\"}")
      expect(byChannel.result.rows.reduce((sum, row) => sum + Number(row[1]), 0)).toBeCloseTo(
        Number(hand.rows[0]![0]),
        4
      )
      // A key with attributes but not this one: the filter matches nothing, not everyone.
      const none = yield* semantic({ metrics: ["revenue"] }, model, "{\"tenant\":\"t1\"}")
      expect(none.result.rows[0]![0]).toBeNull()
      // The organization's own people carry no attributes: row filters are not theirs.
      const all = SemanticCompiler.compile(model, { metrics: ["revenue"] }, engine().dialect, {
        rowFilters: SemanticCompiler.rowFiltersFor("{}")
      })
      const total = yield* run(Either.getOrThrow(all).sql, Either.getOrThrow(all).params)
      const handTotal = yield* run(
        `SELECT SUM(i.line_total) FROM ${t("order_items")} i JOIN ${
          t("orders")
        } o ON o.id = i.order_id WHERE o.status <> 'cancelled'`
      )
      expect(Number(total.rows[0]![0])).toBeCloseTo(Number(handTotal.rows[0]![0]), 4)
    }))
}

describe("SemanticCompiler on DEMO (PGlite)", () => {
  const engine: Engine = {
    name: "DEMO",
    connector: record({ connector_type: "DEMO", name: "Demo", demo: { dataset: "retail" } }),
    dialect: "postgres",
    schema: "public"
  }
  it.layer(Runtime.layer, { timeout: 240_000 })((it) => {
    it.effect("the shipped model is valid, and every verified query runs", () =>
      Effect.gen(function*() {
        const model = modelIn("public")
        expect(model.verifiedQueries.length).toBeGreaterThanOrEqual(20)
        const runtime = yield* ConnectorRuntime
        for (const query of model.verifiedQueries) {
          const bound = Either.getOrThrow(
            SemanticCompiler.verifiedSql(model, query, { year: lastYear, region: "Europe" }, "postgres")
          )
          const result = yield* runtime.query(engine.connector, {
            sql: bound.sql,
            params: bound.params,
            clientAttributesJson: "{}",
            maxRows: 100,
            timeoutMillis: 30_000
          })
          expect(result.rows.length, query.name).toBeGreaterThan(0)
        }
      }))
    suite(it, () => engine)
  })
})

// PostgreSQL and MariaDB hold the same generated rows, in a schema (a database) of their own.
const postgresReachable = await admin(async () => true).catch(() => false)
if (!postgresReachable && process.env.CI === "true") throw new Error(`PostgreSQL unreachable at ${postgresUrl}`)

describe.skipIf(!postgresReachable)("SemanticCompiler on PostgreSQL", () => {
  beforeAll(async () => {
    await admin(async (client) => {
      await client.query(`CREATE SCHEMA ${schemaName}`)
      await client.query(`SET search_path TO ${schemaName}`)
      for (const statement of script.statements) await client.query(statement)
    })
  }, 120_000)
  afterAll(() => admin((client) => client.query(`DROP SCHEMA ${schemaName} CASCADE`)))
  it.layer(Runtime.layerWith({ ...Runtime.defaultOptions, access: localSuperuserAccess }), { timeout: 240_000 })(
    (it) => {
      suite(it, () => ({
        name: "POSTGRES",
        connector: record({
          connector_type: "POSTGRES",
          name: "Warehouse",
          postgres: {
            ...settingsFor(new URL(postgresUrl).username || "postgres"),
            password: Redacted.make(decodeURIComponent(new URL(postgresUrl).password)),
            ssl_mode: "disable"
          }
        }),
        dialect: "postgres",
        schema: schemaName
      }))
    }
  )
})

const mysqlUrl = new URL(process.env.SIGHTLINE_TEST_MYSQL_URL ?? "mysql://root@127.0.0.1:3306/test")
const mysqlSettings = {
  host: mysqlUrl.hostname,
  port: Number(mysqlUrl.port || 3306),
  user: decodeURIComponent(mysqlUrl.username),
  password: decodeURIComponent(mysqlUrl.password)
}
const mysqlReachable = await mysql.createConnection({ ...mysqlSettings, connectTimeout: 3000 })
  .then(async (c) => (await c.end(), true), () => false)
if (!mysqlReachable && process.env.CI === "true") throw new Error(`MySQL unreachable at ${mysqlUrl.host}`)

/** The PostgreSQL script in MariaDB's words: its types, its timestamps, no comments or ANALYZE. */
const forMysql = (statement: string): string | undefined =>
  /^(COMMENT ON|ANALYZE)/.test(statement) ? undefined : statement
    .replace(/text NOT NULL UNIQUE/g, "VARCHAR(100) NOT NULL UNIQUE")
    .replace(/\btext\b/g, "VARCHAR(200)")
    .replace(/timestamptz/g, "DATETIME")
    .replace(/'(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)\.\d{3}Z'/g, "'$1 $2'")

describe.skipIf(!mysqlReachable)("SemanticCompiler on MariaDB", () => {
  beforeAll(async () => {
    const c = await mysql.createConnection({ ...mysqlSettings, multipleStatements: false })
    await c.query(`CREATE DATABASE ${schemaName}`)
    await c.query(`USE ${schemaName}`)
    await c.query("SET time_zone = '+00:00'")
    for (const statement of script.statements) {
      const translated = forMysql(statement)
      if (translated !== undefined) await c.query(translated)
    }
    await c.end()
  }, 120_000)
  afterAll(async () => {
    const c = await mysql.createConnection(mysqlSettings)
    await c.query(`DROP DATABASE IF EXISTS ${schemaName}`)
    await c.end()
  })
  it.layer(Runtime.layerWith({ ...Runtime.defaultOptions, access: localSuperuserAccess }), { timeout: 240_000 })(
    (it) => {
      suite(it, () => ({
        name: "MYSQL",
        connector: record({
          connector_type: "MYSQL",
          name: "Shop",
          mysql: {
            host: mysqlSettings.host,
            port: mysqlSettings.port,
            user: mysqlSettings.user,
            database: schemaName,
            password: Redacted.make(mysqlSettings.password),
            ssl_mode: "disable"
          }
        }),
        dialect: "mysql",
        schema: schemaName
      }))
    }
  )
})

// A FILES connector holding the same rows: each table written out as a Parquet file by DuckDB (from
// the PostgreSQL script, which DuckDB reads as it is), then uploaded as users upload files.
const filesDirectory = fs.mkdtempSync(NodePath.join(os.tmpdir(), "sightline-semantic-files-"))
afterAll(() => fs.rmSync(filesDirectory, { recursive: true, force: true }))
let filesConnector: Connector.ConnectorRecord | undefined

const parquetUploads = Effect.promise(async () => {
  const { DuckDBConnection, DuckDBInstance } = await import("@duckdb/node-api")
  const instance = await DuckDBInstance.create(":memory:")
  const connection = await DuckDBConnection.create(instance)
  try {
    for (const statement of script.statements) await connection.run(statement)
    const tables = (await connection.runAndReadAll("SELECT table_name FROM duckdb_tables() ORDER BY 1"))
      .getRowsJson().map(([name]) => String(name))
    return await Promise.all(tables.map(async (table) => {
      const path = NodePath.join(filesDirectory, `${table}.parquet`)
      await connection.run(`COPY ${table} TO '${path}' (FORMAT parquet)`)
      return { path, fileName: `${table}.parquet`, sizeBytes: fs.statSync(path).size }
    }))
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
})

// The runtime answers on FILES connectors where the host provides their databases, as the server does.
const filesLayer = Layer.effectDiscard(
  Effect.gen(function*() {
    const settings = yield* (yield* ConnectorFiles).load(
      OrganizationId.make(crypto.randomUUID()),
      yield* parquetUploads
    )
    filesConnector = record({ connector_type: "FILES", name: "Shop files", files: settings })
  })
).pipe(
  Layer.provideMerge(
    // A runtime of its own: `Runtime.layer`, built by the DEMO leg, is memoized without the files.
    Runtime.layerWith(Runtime.defaultOptions).pipe(
      Layer.provideMerge(FilesConnector.layer({ cacheDirectory: NodePath.join(filesDirectory, "cache") })),
      Layer.provide(AssetStore.layerMemory),
      Layer.provide(Transaction.layerMemory)
    )
  )
)

describe("SemanticCompiler on DuckDB (a FILES connector)", () => {
  it.layer(filesLayer, { timeout: 240_000 })((it) => {
    suite(it, () => ({ name: "FILES", connector: filesConnector!, dialect: "duckdb", schema: "main" }))
  })
})
