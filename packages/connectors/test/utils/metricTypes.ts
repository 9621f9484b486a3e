/**
 * The metric types beyond sums and counts (percentiles, semi-additive measures, derived,
 * cumulative and conversion metrics, the time spine), each against SQL written by hand, on each
 * engine of the compiler's suite (`SemanticCompiler.test.ts` runs these with its engines).
 */
import { expect, type Vitest } from "@effect/vitest"
import type { ConnectorRuntime } from "@sightline/core/ConnectorRuntime"
import * as SemanticCompiler from "@sightline/core/SemanticCompiler"
import * as SemanticImport from "@sightline/core/SemanticImport"
import * as SemanticModel from "@sightline/core/SemanticModel"
import * as SemanticProbes from "@sightline/core/SemanticProbes"
import type * as SemanticQuery from "@sightline/core/SemanticQuery"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as NodePath from "node:path"

type Row = ReadonlyArray<unknown>

export interface Harness {
  readonly dialect: () => SemanticCompiler.DialectName
  readonly schema: () => string
  readonly model: (extra: (yaml: string) => string) => SemanticModel.SemanticModel
  readonly run: (
    sql: string,
    params?: ReadonlyArray<string | number | boolean | null>
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<Row> }, unknown, ConnectorRuntime>
}

/** The DEMO model with the measures and metrics of these tests added. */
const extended = (yaml: string): string =>
  yaml
    .replace(
      "    measures:\n      - name: revenue\n",
      `    measures:
      - { name: median_line, agg: median, expr: line_total, filters: [not_cancelled], time_dimension: orders.order_date }
      - { name: p90_line, agg: percentile, agg_params: { percentile: 0.9 }, expr: line_total, filters: [not_cancelled], time_dimension: orders.order_date }
      - { name: p90_line_discrete, agg: percentile, agg_params: { percentile: 0.9, use_discrete_percentile: true }, expr: line_total, filters: [not_cancelled], time_dimension: orders.order_date }
      - { name: last_day_revenue, agg: sum, expr: line_total, filters: [not_cancelled], time_dimension: orders.order_date, non_additive_dimension: { name: orders.order_date } }
      - { name: spined_revenue, agg: sum, expr: line_total, filters: [not_cancelled], time_dimension: orders.order_date, join_to_timespine: true, fill_nulls_with: 0 }
      - name: revenue
`
    )
    .replace(
      "    measures:\n      - name: all_orders\n",
      `    measures:
      - { name: latest_day_orders, agg: count, non_additive_dimension: { name: order_date, window_groupings: [customer_id] } }
      - { name: web_orders, agg: sum_boolean, expr: "channel = 'web'" }
      - name: all_orders
`
    )
    .replace(
      "metrics:\n  - name: average_order_value\n",
      `custom_granularities:
  - { name: fiscal_year, grain: year, start_month: 4, synonyms: [FY] }
metrics:
  - { name: revenue_fytd, type: cumulative, measure: revenue, grain_to_date: fiscal_year }
  - { name: net_revenue, type: derived, expr: revenue - refunds, metrics: [{ name: revenue }, { name: refunds }], format: currency }
  - name: revenue_change_mom
    type: derived
    expr: (revenue - last_month) / last_month
    metrics: [{ name: revenue }, { name: revenue, alias: last_month, offset_window: 1 month }]
  - { name: revenue_to_date, type: cumulative, measure: revenue }
  - name: revenue_since_month_start
    type: derived
    expr: revenue - month_start
    metrics: [{ name: revenue }, { name: revenue, alias: month_start, offset_to_grain: month }]
  - name: revenue_against_fiscal_year_start
    type: derived
    expr: revenue / fiscal_start
    metrics: [{ name: revenue }, { name: revenue, alias: fiscal_start, offset_to_grain: fiscal_year }]
  - { name: revenue_7_days, type: cumulative, measure: revenue, window: 7 days }
  - { name: revenue_mtd, type: cumulative, measure: revenue, grain_to_date: month }
  - { name: revenue_to_date_first_day, type: cumulative, measure: revenue, period_agg: first }
  - { name: signup_conversion, type: conversion, base_measure: new_customers, conversion_measure: all_orders, entity: id, conversion_entity: customer_id, window: 30 days }
  - { name: signup_conversions, type: conversion, base_measure: new_customers, conversion_measure: all_orders, entity: id, conversion_entity: customer_id, window: 30 days, calculation: conversions }
  - name: average_order_value
`
    )

const dayKey = (value: unknown): string =>
  value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10)

const keyed = (rows: ReadonlyArray<Row>): Map<string, ReadonlyArray<number | null>> =>
  new Map(rows.map((row) => [dayKey(row[0]), row.slice(1).map((v) => (v === null ? null : Number(v)))]))

const expectSame = (actual: ReadonlyArray<Row>, expected: ReadonlyArray<Row>, digits = 6) => {
  const a = keyed(actual)
  const e = keyed(expected)
  expect([...a.keys()].sort()).toEqual([...e.keys()].sort())
  for (const [key, values] of e) {
    values.forEach((value, i) => {
      const got = a.get(key)![i]!
      if (value === null) expect(got, key).toBeNull()
      else expect(got, key).toBeCloseTo(value, digits)
    })
  }
}

export const metricTypes = (it: Vitest.MethodsNonLive<ConnectorRuntime>, h: Harness) => {
  const lastYear = new Date().getUTCFullYear() - 1
  const t = (name: string) => `${h.schema()}.${name}`
  const mysql = () => h.dialect() === "mysql"
  /** A timestamp's day in UTC (the model's time zone), and its month's first day, in the engine's words. */
  const day = (expr: string) => (mysql() ? `DATE(${expr})` : `CAST(${expr} AT TIME ZONE 'UTC' AS date)`)
  const month = (expr: string) =>
    mysql() ? `CAST(DATE_FORMAT(${expr}, '%Y-%m-01') AS DATE)` : `CAST(date_trunc('month', ${day(expr)}) AS date)`
  const lines = `${t("order_items")} i JOIN ${t("orders")} o ON o.id = i.order_id`
  const year = (y: number) => ({ start: `${y}-01-01`, end: `${y + 1}-01-01` })
  const semantic = (query: SemanticQuery.SemanticQuery) =>
    Effect.gen(function*() {
      const compiled = Either.getOrThrow(SemanticCompiler.compile(h.model(extended), query, h.dialect()))
      return { compiled, rows: (yield* h.run(compiled.sql, compiled.params)).rows }
    })
  /** Revenue of each day (or month) of orders that were not cancelled, by hand, in order. */
  const revenueBy = (unit: (expr: string) => string) =>
    Effect.map(
      h.run(
        `SELECT ${unit("o.ordered_at")} AS k, SUM(i.line_total) FROM ${lines} WHERE o.status <> 'cancelled' GROUP BY ${
          unit("o.ordered_at")
        } ORDER BY 1`
      ),
      (r) => r.rows.map((row) => [dayKey(row[0]), Number(row[1])] as const)
    )

  it.effect("median and percentiles, continuous and discrete, are the engine's own percentiles", () =>
    Effect.gen(function*() {
      const { compiled, rows } = yield* semantic({
        metrics: ["median_line", "p90_line", "p90_line_discrete"],
        dimensions: ["channel"]
      })
      // By hand: MariaDB has percentiles only as window functions; the others as aggregates.
      const hand = mysql()
        ? yield* h.run(
          `SELECT DISTINCT o.channel,
             PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY i.line_total) OVER (PARTITION BY o.channel),
             PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY i.line_total) OVER (PARTITION BY o.channel),
             PERCENTILE_DISC(0.9) WITHIN GROUP (ORDER BY i.line_total) OVER (PARTITION BY o.channel)
           FROM ${lines} WHERE o.status <> 'cancelled'`
        )
        : yield* h.run(
          `SELECT o.channel, PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY i.line_total),
             PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY i.line_total),
             PERCENTILE_DISC(0.9) WITHIN GROUP (ORDER BY i.line_total)
           FROM ${lines} WHERE o.status <> 'cancelled' GROUP BY o.channel`
        )
      expectSame(rows, hand.rows, 4)
      expect(compiled.reading.text).toContain("90th percentile of line total")
    }))

  it.effect("a semi-additive measure reads each month's last day, and each customer's own last day", () =>
    Effect.gen(function*() {
      const { rows } = yield* semantic({
        metrics: ["last_day_revenue"],
        time: { grain: "month", ...year(lastYear) }
      })
      const inYear = (o: string) =>
        `${o}.ordered_at >= '${lastYear}-01-01' AND ${o}.ordered_at < '${lastYear + 1}-01-01'`
      const hand = yield* h.run(
        `SELECT m.k, SUM(i.line_total) FROM ${lines}
         JOIN (SELECT ${month("o2.ordered_at")} AS k, MAX(${day("o2.ordered_at")}) AS d
               FROM ${t("order_items")} i2 JOIN ${t("orders")} o2 ON o2.id = i2.order_id
               WHERE o2.status <> 'cancelled' AND ${inYear("o2")} GROUP BY ${month("o2.ordered_at")}) m
           ON ${day("o.ordered_at")} = m.d
         WHERE o.status <> 'cancelled' GROUP BY m.k`
      )
      expect(rows.length).toBe(12)
      expectSame(rows, hand.rows, 2)
      const total = yield* semantic({ metrics: ["revenue"], time: year(lastYear) })
      expect(Number(rows[0]![1])).toBeLessThan(Number(total.rows[0]![0]) / 12)

      const perCustomer = yield* semantic({
        metrics: ["latest_day_orders"],
        dimensions: ["channel"],
        time: year(lastYear)
      })
      const handPerCustomer = yield* h.run(
        `SELECT o.channel, COUNT(*) FROM ${t("orders")} o
         JOIN (SELECT customer_id, channel, MAX(${day("ordered_at")}) AS d FROM ${t("orders")} o2 WHERE ${inYear("o2")}
               GROUP BY customer_id, channel) m
           ON m.customer_id = o.customer_id AND m.channel = o.channel AND ${day("o.ordered_at")} = m.d
         GROUP BY o.channel`
      )
      expectSame(perCustomer.rows, handPerCustomer.rows)
    }))

  it.effect("sum_boolean counts the rows where its expression holds", () =>
    Effect.gen(function*() {
      const { rows } = yield* semantic({ metrics: ["web_orders", "all_orders"], dimensions: ["status"] })
      const hand = yield* h.run(
        `SELECT status, SUM(CASE WHEN channel = 'web' THEN 1 ELSE 0 END), COUNT(*) FROM ${t("orders")} GROUP BY status`
      )
      expectSame(rows, hand.rows)
    }))

  it.effect("a derived metric is its expression over its inputs, an offset input read a month earlier", () =>
    Effect.gen(function*() {
      const net = yield* semantic({ metrics: ["net_revenue"], dimensions: ["category"] })
      const hand = yield* h.run(
        `SELECT c.name, r.revenue - COALESCE(f.refunds, 0) FROM ${t("categories")} c
         JOIN (SELECT p.category_id, SUM(i.line_total) AS revenue FROM ${lines} JOIN ${
          t("products")
        } p ON p.id = i.product_id
               WHERE o.status <> 'cancelled' GROUP BY p.category_id) r ON r.category_id = c.id
         LEFT JOIN (SELECT p.category_id, SUM(x.refund_amount) AS refunds FROM ${t("returns")} x
               JOIN ${t("order_items")} i ON i.id = x.order_item_id JOIN ${t("products")} p ON p.id = i.product_id
               GROUP BY p.category_id) f ON f.category_id = c.id`
      )
      expectSame(net.rows, hand.rows, 2)

      const change = yield* semantic({ metrics: ["revenue_change_mom"], time: { grain: "month", ...year(lastYear) } })
      const monthly = new Map(yield* revenueBy(month))
      const expected = [...monthly.keys()].filter((k) => k.startsWith(`${lastYear}-`)).map((k) => {
        const [y, m] = k.split("-").map(Number) as [number, number]
        const before = monthly.get(`${m === 1 ? y - 1 : y}-${String(m === 1 ? 12 : m - 1).padStart(2, "0")}-01`)!
        return [k, (monthly.get(k)! - before) / before]
      })
      expect(expected.length).toBe(12)
      expectSame(change.rows, expected)
    }))

  it.effect("an input read at the start of its grain: each day against its month's first, each month against its fiscal year's", () =>
    Effect.gen(function*() {
      const daily = new Map(yield* revenueBy(day))
      const monthly = new Map(yield* revenueBy(month))
      const plusDays = (k: string, n: number) =>
        new Date(Date.parse(`${k}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10)
      const minus = (a: number | undefined, b: number | undefined) => a === undefined || b === undefined ? null : a - b
      // From the 10th: the month's first day lies before the period, and is read all the same.
      const period = { start: `${lastYear}-03-10`, end: `${lastYear}-04-01` }
      const { compiled, rows } = yield* semantic({
        metrics: ["revenue_since_month_start"],
        time: { grain: "day", ...period }
      })
      const days = Array.from({ length: 22 }, (_, i) => plusDays(period.start, i))
      expect(daily.get(`${lastYear}-03-01`)).toBeGreaterThan(0)
      expectSame(rows, days.map((k) => [k, minus(daily.get(k), daily.get(`${lastYear}-03-01`))]), 2)
      expect(compiled.reading.text).toContain("revenue at the start of the month")

      // By month over last year: January to March read the April before it, the rest this April.
      const byMonth = yield* semantic({
        metrics: ["revenue_against_fiscal_year_start"],
        time: { grain: "month", ...year(lastYear) }
      })
      const months = Array.from({ length: 12 }, (_, i) => `${lastYear}-${String(i + 1).padStart(2, "0")}-01`)
      expectSame(
        byMonth.rows,
        months.map((
          k
        ) => [k, monthly.get(k)! / monthly.get(`${k < `${lastYear}-04` ? lastYear - 1 : lastYear}-04-01`)!]),
        6
      )

      const refusal = SemanticCompiler.compile(
        h.model(extended),
        { metrics: ["revenue_since_month_start"], time: { grain: "year" } },
        h.dialect()
      )
      expect(Either.getLeft(refusal).pipe((e) => e._tag === "Some" ? e.value.message : "compiled")).toBe(
        "metric revenue_since_month_start reads revenue at the start of each month: read it by month or a finer grain, not year"
      )
    }))

  it.effect("cumulative metrics: a running total, a trailing window, month to date, and a period's first day", () =>
    Effect.gen(function*() {
      const daily = yield* revenueBy(day)
      const upTo = (end: string, from = "") =>
        daily.filter(([k]) => k >= from && k < end).reduce((sum, [, v]) => sum + v, 0)
      const nextMonth = (k: string) => {
        const [y, m] = k.split("-").map(Number) as [number, number]
        return `${m === 12 ? y + 1 : y}-${String(m === 12 ? 1 : m + 1).padStart(2, "0")}-01`
      }
      const plusDays = (k: string, n: number) =>
        new Date(Date.parse(`${k}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10)

      const running = yield* semantic({
        metrics: ["revenue_to_date", "revenue_to_date_first_day"],
        time: { grain: "month", ...year(lastYear) }
      })
      const months = Array.from({ length: 12 }, (_, i) => `${lastYear}-${String(i + 1).padStart(2, "0")}-01`)
      expectSame(running.rows, months.map((k) => [k, upTo(nextMonth(k)), upTo(plusDays(k, 1))]), 2)

      // By day over one month: the last seven days, and the month so far.
      const march = { start: `${lastYear}-03-01`, end: `${lastYear}-04-01` }
      const byDay = yield* semantic({ metrics: ["revenue_7_days", "revenue_mtd"], time: { grain: "day", ...march } })
      const days = Array.from({ length: 31 }, (_, i) => plusDays(march.start, i))
      expectSame(
        byDay.rows,
        days.map((k) => [k, upTo(plusDays(k, 1), plusDays(k, -6)), upTo(plusDays(k, 1), march.start)]),
        2
      )

      // With no period, the spine spans the months that have rows.
      const all = yield* semantic({ metrics: ["revenue_to_date"], time: { grain: "year" } })
      expectSame(all.rows, [
        [`${lastYear - 1}-01-01`, upTo(`${lastYear}-01-01`)],
        [`${lastYear}-01-01`, upTo(`${lastYear + 1}-01-01`)]
      ], 2)
      expect(
        Either.match(SemanticCompiler.compile(h.model(extended), { metrics: ["revenue_mtd"] }, h.dialect()), {
          onLeft: (e) => e.message,
          onRight: () => "compiled"
        })
      ).toBe("metric revenue_mtd accumulates over time: read it by a time grain over one period")
    }))

  it.effect("a custom granularity: fiscal years from April, fiscal year to date, and the same in the Cube and LookML imports", () =>
    Effect.gen(function*() {
      const daily = yield* revenueBy(day)
      // Computed here, not by the engine: a day's fiscal year starts on the April 1 on or before it.
      const fiscalYear = (k: string) => {
        const [y, m] = k.split("-").map(Number) as [number, number]
        return `${m >= 4 ? y : y - 1}-04-01`
      }
      const byFiscalYear = new Map<string, number>()
      for (const [k, v] of daily) byFiscalYear.set(fiscalYear(k), (byFiscalYear.get(fiscalYear(k)) ?? 0) + v)
      const { compiled, rows } = yield* semantic({ metrics: ["revenue"], time: { grain: "fiscal_year" } })
      expect(rows.length).toBe(3)
      expectSame(rows, [...byFiscalYear], 2)
      expect(compiled.reading.text).toContain("fiscal year (from April)")

      // Fiscal year to date, by month of last year: from each month's fiscal year start to its end.
      const months = Array.from({ length: 12 }, (_, i) => `${lastYear}-${String(i + 1).padStart(2, "0")}-01`)
      const monthEnd = (k: string) => months[months.indexOf(k) + 1] ?? `${lastYear + 1}-01-01`
      const fytd = yield* semantic({ metrics: ["revenue_fytd"], time: { grain: "month", ...year(lastYear) } })
      expectSame(
        fytd.rows,
        months.map((k) => [
          k,
          daily.filter(([d]) => d >= fiscalYear(k) && d < monthEnd(k)).reduce((sum, [, v]) => sum + v, 0)
        ]),
        2
      )

      // Orders by fiscal year and quarter, as Cube (an offset and an origin) and LookML
      // (fiscal_month_offset) define them.
      const orders = (yield* h.run(
        `SELECT ${day("ordered_at")}, COUNT(*) FROM ${t("orders")} WHERE status <> 'cancelled' GROUP BY ${
          day("ordered_at")
        }`
      )).rows.map((r) => [dayKey(r[0]), Number(r[1])] as const)
      const fiscalQuarter = (k: string) => {
        const [y, m] = k.split("-").map(Number) as [number, number]
        return `${y}-${String(m - ((m - 4 + 12) % 3)).padStart(2, "0")}-01`
      }
      const count = (bucket: (k: string) => string) => {
        const totals = new Map<string, number>()
        for (const [k, v] of orders) totals.set(bucket(k), (totals.get(bucket(k)) ?? 0) + v)
        return [...totals]
      }
      for (const [format, directory] of [["cube", "cube"], ["lookml", "lookml"]] as const) {
        const model = importedModel(format, directory)
        expectSame(yield* imported({ metrics: ["orders"], time: { grain: "fiscal_year" } }, model), count(fiscalYear))
        expectSame(
          yield* imported({ metrics: ["orders"], time: { grain: "fiscal_quarter" } }, model),
          count(fiscalQuarter)
        )
      }
    }))

  it.effect("a conversion metric: sign-ups followed by an order within 30 days, by segment", () =>
    Effect.gen(function*() {
      const { rows } = yield* semantic({
        metrics: ["signup_conversions", "new_customers", "signup_conversion"],
        dimensions: ["segment"],
        time: year(lastYear)
      })
      const plus30 = mysql() ? "c.created_at + INTERVAL 30 DAY" : "c.created_at + INTERVAL '30 days'"
      const hand = yield* h.run(
        `SELECT c.segment, SUM(CASE WHEN EXISTS (SELECT 1 FROM ${t("orders")} o WHERE o.customer_id = c.id
             AND o.ordered_at >= c.created_at AND o.ordered_at < ${plus30}) THEN 1 ELSE 0 END), COUNT(*)
         FROM ${t("customers")} c WHERE c.created_at >= '${lastYear}-01-01' AND c.created_at < '${lastYear + 1}-01-01'
         GROUP BY c.segment`
      )
      expectSame(rows, hand.rows.map((r) => [r[0], Number(r[1]), Number(r[2]), Number(r[1]) / Number(r[2])]))
      expect(Number(rows[0]![1])).toBeGreaterThan(0)
    }))

  it.effect("a measure joined to the time spine has a row for every period, filled", () =>
    Effect.gen(function*() {
      // Web orders of one week in a range of three months: every other week reads zero.
      const { rows } = yield* semantic({
        metrics: ["spined_revenue"],
        dimensions: ["channel"],
        filters: [
          { dimension: "channel", operator: "=", values: ["web"] },
          { dimension: "order_date", operator: ">=", values: [`${lastYear}-02-03`] },
          { dimension: "order_date", operator: "<", values: [`${lastYear}-02-10`] }
        ],
        time: { grain: "month", start: `${lastYear}-01-01`, end: `${lastYear}-04-01` }
      })
      expect(rows.map((r) => [r[0], dayKey(r[1])])).toEqual([
        ["web", `${lastYear}-01-01`],
        ["web", `${lastYear}-02-01`],
        ["web", `${lastYear}-03-01`]
      ])
      expect(Number(rows[0]![2])).toBe(0)
      expect(Number(rows[1]![2])).toBeGreaterThan(0)
      expect(Number(rows[2]![2])).toBe(0)
    }))

  it.effect("a change's check probes every new metric, and each probe runs on the engine", () =>
    Effect.gen(function*() {
      const added = [
        "median_line",
        "p90_line",
        "last_day_revenue",
        "latest_day_orders",
        "web_orders",
        "net_revenue",
        "revenue_change_mom",
        "revenue_to_date",
        "revenue_7_days",
        "revenue_mtd",
        "signup_conversion"
      ]
      const probes = SemanticProbes.probes(h.model(extended), h.dialect())
        .filter((probe) => added.some((name) => probe.subject === `metric ${name}`))
      expect(probes.length).toBe(added.length)
      for (const probe of probes) {
        expect(probe.error, probe.subject).toBeUndefined()
        const { rows } = yield* h.run(probe.sql, probe.params)
        expect(rows.length, probe.subject).toBeGreaterThan(0)
      }
    }))

  // Projects written over the DEMO tables (core's fixtures), imported as a user imports them.
  const importedModel = (format: SemanticImport.Format, directory: string) => {
    const root = NodePath.join(__dirname, "..", "..", "..", "core", "test", "fixtures", "import", directory)
    const walk = (at: string): Array<string> =>
      fs.readdirSync(at, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(NodePath.join(at, e.name)) : [NodePath.join(at, e.name)]
      )
    const files = walk(root).map((p) => ({ path: NodePath.relative(root, p), text: fs.readFileSync(p, "utf8") }))
    const { model } = Either.getOrThrow(
      SemanticImport.importFiles(format, files, { schema: h.schema(), name: directory })
    )
    return Either.getOrThrow(SemanticModel.validate(`semantic/${directory}.yaml`, model))
  }
  const dbtModel = () => importedModel("dbt", "dbt")
  const imported = (query: SemanticQuery.SemanticQuery, model = dbtModel()) =>
    Effect.gen(function*() {
      const compiled = Either.getOrThrow(SemanticCompiler.compile(model, query, h.dialect()))
      return (yield* h.run(compiled.sql, compiled.params)).rows
    })

  it.effect("the same metrics in dbt, Cube, LookML and OSI give the same figures", () =>
    Effect.gen(function*() {
      // Revenue, orders and their ratio by channel, and revenue by region, in each import.
      const byChannel = { metrics: ["revenue", "orders", "average_order_value"], dimensions: ["channel"] }
      const expected = (yield* h.run(
        `SELECT o.channel, SUM(i.line_total), COUNT(DISTINCT o.id), SUM(i.line_total) / COUNT(DISTINCT o.id)
         FROM ${lines} WHERE o.status <> 'cancelled' GROUP BY o.channel`
      )).rows
      for (const [format, directory] of [["dbt", "dbt"], ["cube", "cube"], ["lookml", "lookml"]] as const) {
        expectSame(yield* imported(byChannel, importedModel(format, directory)), expected, 4)
        expectSame(
          yield* imported({ metrics: ["revenue"], dimensions: ["region_name"] }, importedModel(format, directory)),
          (yield* h.run(
            `SELECT r.name, SUM(i.line_total) FROM ${lines} JOIN ${t("customers")} c ON c.id = o.customer_id
             JOIN ${t("regions")} r ON r.id = c.region_id WHERE o.status <> 'cancelled' GROUP BY r.name`
          )).rows,
          2
        )
      }
      // Each model written as OSI and read back answers the same.
      for (const directory of ["dbt", "cube", "lookml"] as const) {
        const format = directory
        const model = importedModel(format, directory)
        const back = Either.getOrThrow(
          SemanticImport.importFiles("osi", [{ path: "x.osi.yaml", text: SemanticImport.toOsi(model.file) }])
        )
        const reread = Either.getOrThrow(SemanticModel.validate("semantic/back.yaml", back.model))
        expectSame(yield* imported(byChannel, reread), expected, 4)
      }
    }))

  it.effect("every metric the imports share, by every dimension it reaches and by month, agrees across them", () =>
    Effect.gen(function*() {
      const models = (["dbt", "cube", "lookml"] as const).map((format) => importedModel(format, format))
      const metrics = ["signups", "order_count", "ordering_customers", "orders", "revenue", "average_order_value"]
      const queries: Array<SemanticQuery.SemanticQuery> = metrics.flatMap((metric) => [
        ...["channel", "status", "segment", "region_name"].map((d) => ({ metrics: [metric], dimensions: [d] })),
        { metrics: [metric], time: { grain: "month" as const } }
      ])
      let compared = 0
      for (const query of queries) {
        const what = `${query.metrics[0]} by ${query.dimensions?.[0] ?? "month"}`
        const compiled = models.map((model) => SemanticCompiler.compile(model, query, h.dialect()))
        // The three projects relate the same tables: a metric reaches the same dimensions in each.
        expect(compiled.map(Either.isRight), what).toEqual(compiled.map(() => Either.isRight(compiled[0]!)))
        if (Either.isLeft(compiled[0]!)) continue
        const [first, ...rest] = yield* Effect.forEach(
          compiled.map(Either.getOrThrow),
          (c) => Effect.map(h.run(c.sql, c.params), (r) => r.rows)
        )
        expect(first!.length, what).toBeGreaterThan(0)
        for (const rows of rest) expectSame(rows, first!, 4)
        compared++
      }
      // Sign-ups (customers) reach their segment and region, the order metrics every dimension; the
      // projects give order lines no time of their own, so revenue and AOV are not read by month.
      expect(compared).toBe(2 + 5 * 4 + metrics.length - 2)
    }))

  it.effect("a Cube model's measures, imported, give the figures of SQL written by hand", () =>
    Effect.gen(function*() {
      const cube = importedModel("cube", "cube")
      expectSame(
        yield* imported({ metrics: ["revenue", "orders", "average_order_value"], dimensions: ["channel"] }, cube),
        (yield* h.run(
          `SELECT o.channel, SUM(i.line_total), COUNT(DISTINCT o.id), SUM(i.line_total) / COUNT(DISTINCT o.id)
           FROM ${lines} WHERE o.status <> 'cancelled' GROUP BY o.channel`
        )).rows,
        4
      )
      expectSame(
        yield* imported({ metrics: ["revenue"], dimensions: ["region_name"] }, cube),
        (yield* h.run(
          `SELECT r.name, SUM(i.line_total) FROM ${lines} JOIN ${t("customers")} c ON c.id = o.customer_id
           JOIN ${t("regions")} r ON r.id = c.region_id WHERE o.status <> 'cancelled' GROUP BY r.name`
        )).rows,
        2
      )
      // Rolling windows: month to date and the last seven days, by day over March.
      const daily = new Map(
        (yield* h.run(`SELECT ${day("ordered_at")}, COUNT(*) FROM ${t("orders")} GROUP BY ${day("ordered_at")}`)).rows
          .map((r) => [dayKey(r[0]), Number(r[1])] as const)
      )
      const plusDays = (k: string, n: number) =>
        new Date(Date.parse(`${k}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10)
      const sum = (from: string, to: string) =>
        [...daily].filter(([k]) => k >= from && k < to).reduce((total, [, v]) => total + v, 0)
      const march = { start: `${lastYear}-03-01`, end: `${lastYear}-04-01` }
      const days = Array.from({ length: 31 }, (_, i) => plusDays(march.start, i))
      expectSame(
        yield* imported({ metrics: ["orders_mtd", "orders_last_7_days"], time: { grain: "day", ...march } }, cube),
        days.map((k) => [k, sum(march.start, plusDays(k, 1)), sum(plusDays(k, -6), plusDays(k, 1))])
      )
    }))

  it.effect("a dbt project's metrics, imported, give the figures of SQL written by hand", () =>
    Effect.gen(function*() {
      const notCancelled = `FROM ${lines} WHERE o.status <> 'cancelled'`
      expectSame(
        yield* imported({ metrics: ["revenue", "orders", "average_order_value"], dimensions: ["channel"] }),
        (yield* h.run(
          `SELECT o.channel, SUM(i.line_total), COUNT(DISTINCT o.id), SUM(i.line_total) / COUNT(DISTINCT o.id) ${notCancelled} GROUP BY o.channel`
        )).rows,
        4
      )
      // The saved query is a verified query that answers the same.
      const model = dbtModel()
      const saved = Either.getOrThrow(
        SemanticCompiler.verifiedSql(
          model,
          model.verifiedQueries.find((q) => q.name === "revenue_by_channel")!,
          {},
          h.dialect()
        )
      )
      const byChannel = (yield* h.run(saved.sql, saved.params)).rows
      expect(byChannel.map((r) => r[0])).toEqual(["web", "store", "partner"])

      // Net revenue: revenue less all refunds.
      const [net] = yield* imported({ metrics: ["net_revenue"] })
      const [hand] = (yield* h.run(
        `SELECT (SELECT SUM(i.line_total) ${notCancelled}) - (SELECT SUM(refund_amount) FROM ${t("returns")})`
      )).rows
      expect(Number(net![0])).toBeCloseTo(Number(hand![0]), 2)

      // Orders against the month before, and month to date, by the orders' own time.
      const monthly = new Map(
        (yield* h.run(
          `SELECT ${month("ordered_at")}, COUNT(*) FROM ${t("orders")} GROUP BY ${month("ordered_at")}`
        )).rows.map((r) => [dayKey(r[0]), Number(r[1])] as const)
      )
      const growth = yield* imported({ metrics: ["order_growth_mom"], time: { grain: "month", ...year(lastYear) } })
      expectSame(
        growth,
        [...monthly.keys()].filter((k) => k.startsWith(`${lastYear}-`)).map((k) => {
          const [y, m] = k.split("-").map(Number) as [number, number]
          const before = monthly.get(`${m === 1 ? y - 1 : y}-${String(m === 1 ? 12 : m - 1).padStart(2, "0")}-01`)!
          return [k, (monthly.get(k)! - before) / before]
        })
      )

      // Sign-ups who ordered within 30 days, by segment.
      const plus30 = mysql() ? "c.created_at + INTERVAL 30 DAY" : "c.created_at + INTERVAL '30 days'"
      const conversion = yield* imported({
        metrics: ["signup_to_order_rate"],
        dimensions: ["segment"],
        time: year(lastYear)
      })
      const handConversion = yield* h.run(
        `SELECT c.segment, SUM(CASE WHEN EXISTS (SELECT 1 FROM ${t("orders")} o WHERE o.customer_id = c.id
             AND o.ordered_at >= c.created_at AND o.ordered_at < ${plus30}) THEN 1 ELSE 0 END) * 1e0 / COUNT(*)
         FROM ${t("customers")} c WHERE c.created_at >= '${lastYear}-01-01' AND c.created_at < '${lastYear + 1}-01-01'
         GROUP BY c.segment`
      )
      expectSame(conversion, handConversion.rows)

      // Revenue by the region of the order's customer: three joins the entities declared.
      const regions = yield* imported({ metrics: ["revenue"], dimensions: ["region_name"] })
      const handRegions = yield* h.run(
        `SELECT r.name, SUM(i.line_total) FROM ${lines} JOIN ${t("customers")} c ON c.id = o.customer_id
         JOIN ${t("regions")} r ON r.id = c.region_id WHERE o.status <> 'cancelled' GROUP BY r.name`
      )
      expectSame(regions, handRegions.rows, 2)
    }))
}
