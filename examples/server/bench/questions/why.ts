/**
 * Questions of change and contribution about the DEMO data ("why did revenue drop in March", "what
 * drove the growth last year", "where are returns coming from"), each with SQL written by hand that
 * gives its first driver's figures: the answer is correct when it names the direction of the change
 * and the value that drove most of it (or, at one time, the largest contributor), as the hand figures
 * say. `null` marks a question to decline, with what its decline must say.
 *
 * Written fresh for the investigations of issue 65.
 */
import { monthNames } from "@sightline/core/SemanticReading"
import { sqlOf } from "./demo.js"

/**
 * A question and how its answer is judged:
 * - `sum`: the hand SQL gives `(value, before, after)` of the first driver;
 * - `ratio`: `(value, numerator before, denominator before, numerator after, denominator after)`;
 * - `share`: `(value, figure)` at one time.
 */
export type Why =
  | { readonly question: string; readonly kind: "sum" | "ratio" | "share"; readonly sql: string }
  | { readonly question: string; readonly kind: "decline"; readonly reason: RegExp }

export const questions = (lastYear: number): ReadonlyArray<Why> => {
  const LY = lastYear
  const PY = LY - 1
  const { lines, notCancelled, toCategory, toRegion } = sqlOf()
  const measures = { revenue: "i.line_total", units: "i.quantity" } as const
  const day = (year: number, month: number) =>
    `${month > 12 ? year + 1 : year}-${String(month > 12 ? month - 12 : month).padStart(2, "0")}-01`
  /** A measure by a group in a period and the one before it, as (value, before, after). */
  const change = (
    measure: keyof typeof measures | "orders",
    group: string,
    joins: string,
    before: readonly [string, string],
    after: readonly [string, string],
    where = ""
  ) => {
    const within = ([from, to]: readonly [string, string]) => `o.ordered_at >= '${from}' AND o.ordered_at < '${to}'`
    const of = (span: readonly [string, string]) =>
      measure === "orders"
        ? `COUNT(DISTINCT CASE WHEN ${within(span)} THEN o.id END)`
        : `SUM(CASE WHEN ${within(span)} THEN ${measures[measure]} ELSE 0 END)`
    return `SELECT ${group}, ${of(before)}, ${of(after)} FROM ${lines} ${joins}
      WHERE ${notCancelled}${where === "" ? "" : ` AND ${where}`} AND (${within(before)} OR ${within(after)})
      GROUP BY 1`
  }
  /** The average order value by region, from `from` to `split` and from `split` to `to`, as a ratio's parts. */
  const averageOrderValue = (from: string, split: string, to: string) =>
    `SELECT r.name,
      SUM(i.line_total) FILTER (WHERE o.ordered_at < '${split}'),
      COUNT(DISTINCT o.id) FILTER (WHERE o.ordered_at < '${split}'),
      SUM(i.line_total) FILTER (WHERE o.ordered_at >= '${split}'),
      COUNT(DISTINCT o.id) FILTER (WHERE o.ordered_at >= '${split}')
    FROM ${lines} ${toRegion}
    WHERE ${notCancelled} AND o.ordered_at >= '${from}' AND o.ordered_at < '${to}' GROUP BY 1`
  const month = (year: number, m: number) => [day(year, m), day(year, m + 1)] as const
  const previousMonth = (year: number, m: number) => m === 1 ? month(year - 1, 12) : month(year, m - 1)
  const region = "r.name"
  const questions: Array<Why> = []
  // Each month of last year against the one before, in four phrasings and three measures.
  for (let m = 1; m <= 12; m++) {
    const name = monthNames[m - 1]!
    const [measure, question] = ([
      ["revenue", `why did revenue drop in ${name} ${LY}?`],
      ["units", `what drove the change in units in ${name} ${LY}`],
      ["orders", `why did orders fall in ${name} ${LY}`],
      ["revenue", `how did revenue change in ${name} ${LY}?`]
    ] as const)[m % 4]!
    questions.push({
      question,
      kind: "sum",
      sql: change(measure, region, toRegion, previousMonth(LY, m), month(LY, m))
    })
  }
  // Some months of the year before.
  for (const m of [3, 5, 7, 9, 11, 12]) {
    questions.push({
      question: m % 2 === 0
        ? `why did units rise in ${monthNames[m - 1]} ${PY}`
        : `what caused the dip in revenue in ${monthNames[m - 1]} ${PY}`,
      kind: "sum",
      sql: change(m % 2 === 0 ? "units" : "revenue", region, toRegion, previousMonth(PY, m), month(PY, m))
    })
  }
  // Quarters against the quarter before.
  for (const q of [1, 2, 3, 4]) {
    const start = (q - 1) * 3 + 1
    const quarter = [day(LY, start), day(LY, start + 3)] as const
    const before = q === 1 ? [day(PY, 10), day(LY, 1)] as const : [day(LY, start - 3), day(LY, start)] as const
    questions.push({
      question: [`why did revenue rise in q${q} ${LY}`, `explain the drop in orders in Q${q} ${LY}`][q % 2]!,
      kind: "sum",
      sql: change(q % 2 === 0 ? "revenue" : "orders", region, toRegion, before, quarter)
    })
  }
  const years = [[day(PY, 1), day(LY, 1)], [day(LY, 1), day(LY + 1, 1)]] as const
  questions.push(
    {
      question: "what drove the growth in revenue last year",
      kind: "sum",
      sql: change("revenue", region, toRegion, ...years)
    },
    { question: `why did units grow in ${LY}`, kind: "sum", sql: change("units", region, toRegion, ...years) },
    { question: "how did orders change last year?", kind: "sum", sql: change("orders", region, toRegion, ...years) },
    {
      question: `why did revenue fall from q1 to q2 ${LY}`,
      kind: "sum",
      sql: change("revenue", region, toRegion, [day(LY, 1), day(LY, 4)], [day(LY, 4), day(LY, 7)])
    },
    {
      question: `what drove the change in units from march to april ${LY}`,
      kind: "sum",
      sql: change("units", region, toRegion, month(LY, 3), month(LY, 4))
    },
    // Kept to a value: the web channel, the Laptops category.
    {
      question: `why did web revenue drop in March ${LY}`,
      kind: "sum",
      sql: change("revenue", region, toRegion, month(LY, 2), month(LY, 3), "o.channel = 'web'")
    },
    {
      question: `why did laptop revenue change in Q3 ${LY}`,
      kind: "sum",
      sql: change(
        "revenue",
        region,
        `${toRegion} ${toCategory}`,
        [day(LY, 4), day(LY, 7)],
        [day(LY, 7), day(LY, 10)],
        "ca.name = 'Laptops'"
      )
    },
    // A breakdown named is the driver.
    {
      question: `why did revenue drop in March ${LY} by channel`,
      kind: "sum",
      sql: change("revenue", "o.channel", "", month(LY, 2), month(LY, 3))
    },
    {
      question: `what drove the growth in units last year by category`,
      kind: "sum",
      sql: change("units", "ca.name", toCategory, ...years)
    },
    // Ratios split into rate and mix: the return rate by category (its drivers), the average order value by region.
    {
      question: "why did the return rate rise last year",
      kind: "ratio",
      sql: `SELECT ca.name,
          COUNT(rt.id) FILTER (WHERE o.ordered_at < '${day(LY, 1)}'), COUNT(*) FILTER (WHERE o.ordered_at < '${
        day(LY, 1)
      }'),
          COUNT(rt.id) FILTER (WHERE o.ordered_at >= '${day(LY, 1)}'), COUNT(*) FILTER (WHERE o.ordered_at >= '${
        day(LY, 1)
      }')
        FROM ${lines} ${toCategory} LEFT JOIN returns rt ON rt.order_item_id = i.id
        WHERE ${notCancelled} AND o.ordered_at >= '${day(PY, 1)}' AND o.ordered_at < '${day(LY + 1, 1)}' GROUP BY 1`
    },
    {
      question: "what drove the change in average order value last year",
      kind: "ratio",
      sql: averageOrderValue(day(PY, 1), day(LY, 1), day(LY + 1, 1))
    },
    // Where a total comes from.
    {
      question: `where did revenue come from in ${LY}`,
      kind: "share",
      sql: `SELECT r.name, SUM(i.line_total) FROM ${lines} ${toRegion} WHERE ${notCancelled} AND o.ordered_at >= '${
        day(LY, 1)
      }' AND o.ordered_at < '${day(LY + 1, 1)}' GROUP BY 1`
    },
    {
      question: "where are units coming from",
      kind: "share",
      sql: `SELECT r.name, SUM(i.quantity) FROM ${lines} ${toRegion} WHERE ${notCancelled} GROUP BY 1`
    },
    // The driver named by "which": categories, channels, the region.
    {
      question: "which categories drove the revenue growth last year",
      kind: "sum",
      sql: change("revenue", "ca.name", toCategory, ...years)
    },
    {
      question: `which channels explain the drop in orders in March ${LY}`,
      kind: "sum",
      sql: change("orders", "o.channel", "", month(LY, 2), month(LY, 3))
    },
    {
      question: `which region drove the fall in revenue in February ${LY}`,
      kind: "sum",
      sql: change("revenue", region, toRegion, month(LY, 1), month(LY, 2))
    },
    // Kept to one value, the next driver leads: in Europe, the categories; for laptops, the regions.
    {
      question: `what drove the drop in revenue in europe in june ${LY}`,
      kind: "sum",
      sql: change("revenue", "ca.name", `${toRegion} ${toCategory}`, month(LY, 5), month(LY, 6), "r.name = 'Europe'")
    },
    {
      question: `why did laptop units fall in Q2 ${LY}`,
      kind: "sum",
      sql: change(
        "units",
        region,
        `${toRegion} ${toCategory}`,
        [day(LY, 1), day(LY, 4)],
        [day(LY, 4), day(LY, 7)],
        "ca.name = 'Laptops'"
      )
    },
    {
      question: `why did average order value drop in March ${LY}`,
      kind: "ratio",
      sql: averageOrderValue(day(LY, 2), day(LY, 3), day(LY, 4))
    },
    {
      question: `where did returns come from last year`,
      kind: "share",
      sql: `SELECT r.name, COUNT(*) FROM returns rt JOIN order_items i ON i.id = rt.order_item_id
        JOIN orders o ON o.id = i.order_id ${toRegion}
        WHERE rt.returned_at >= '${day(LY, 1)}' AND rt.returned_at < '${day(LY + 1, 1)}' GROUP BY 1`
    },
    {
      question: `where did units come from in Q2 ${LY} by category`,
      kind: "share",
      sql: `SELECT ca.name, SUM(i.quantity) FROM ${lines} ${toCategory} WHERE ${notCancelled} AND o.ordered_at >= '${
        day(LY, 4)
      }' AND o.ordered_at < '${day(LY, 7)}' GROUP BY 1`
    },
    // To decline, for their reason.
    { question: "why did revenue drop", kind: "decline", reason: /names no period to compare/ },
    { question: "why do customers send laptops back", kind: "decline", reason: /asks for a cause/ },
    { question: "why did revenue drop in march", kind: "decline", reason: /holds no revenue in March \d{4}/ },
    { question: "why did the median order value fall last year", kind: "decline", reason: /"median"/ },
    { question: "why did revenue share fall last year", kind: "decline", reason: /is not a sum, a count/ }
  )
  return questions
}
