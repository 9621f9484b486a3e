/**
 * How a metric's change between two periods splits across the values of one dimension, and how its
 * total at one time does: the arithmetic of an investigation, on rows the compiler already gave.
 *
 * - **A sum or a count** changes by the sum of its values' changes: each value's part is its own
 *   change, and the parts add up to the total change exactly.
 * - **A ratio** (revenue per order, returned lines per line) changes both because each value's own
 *   ratio moved (**rate**) and because its share of the denominator moved (**mix**). With the
 *   midpoint weights (the mean of the two periods' shares and ratios), a value's rate and mix add up
 *   to its part, and the parts add up to the total change exactly, whatever the values.
 * - **A contribution** at one time is each value's share of the total, beside its share of a base
 *   (returns beside the lines sold): the values whose share stands out against their base.
 *
 * A value missing from a period counts zero there (no orders in Europe in a month: no revenue).
 * Nothing here says why a value moved: the parts say where the change is.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A value of the dimension (null for rows without one).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Value = Schema.NullOr(Schema.Union(Schema.String, Schema.Number, Schema.Boolean))
export type Value = typeof Value.Type

/**
 * One value's part of the change: its figure in each period, its change, and that change as a
 * share of the total change; for a ratio, the rate and mix effects it splits into.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Part = Schema.Struct({
  value: Value,
  before: Schema.Number,
  after: Schema.Number,
  /** The part of the total change: `after - before` for a sum, `rate + mix` for a ratio. */
  change: Schema.Number,
  /** `change` over the total change; absent when the total did not change. */
  share: Schema.optional(Schema.Number),
  /** A ratio's part due to the value's own ratio moving. */
  rate: Schema.optional(Schema.Number),
  /** A ratio's part due to the value's weight (its share of the denominator) moving. */
  mix: Schema.optional(Schema.Number)
})
export type Part = typeof Part.Type

/**
 * A metric in both periods, and its change split across the values of a dimension, the values
 * that drove the change most first.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Breakdown = Schema.Struct({
  dimension: Schema.String,
  kind: Schema.Literal("sum", "ratio"),
  before: Schema.Number,
  after: Schema.Number,
  change: Schema.Number,
  /** `change` over `before`; absent when `before` is zero. */
  relative: Schema.optional(Schema.Number),
  parts: Schema.Array(Part)
}).annotations({ identifier: "Breakdown" })
export type Breakdown = typeof Breakdown.Type

/**
 * One value's share of a total at one time, beside its share of the base it is read against.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Contribution = Schema.Struct({
  value: Value,
  figure: Schema.Number,
  share: Schema.Number,
  /** Its share of the base (the lines sold, for returns); absent without a base. */
  base_share: Schema.optional(Schema.Number),
  /** `share / base_share`: above 1, the value contributes more than its base would say. */
  lift: Schema.optional(Schema.Number)
})
export type Contribution = typeof Contribution.Type

/** A value's figure in each period, a missing one counting zero. */
export interface SumRow {
  readonly value: Value
  readonly before: number | null | undefined
  readonly after: number | null | undefined
}

/** A value's numerator and denominator in each period, a missing one counting zero. */
export interface RatioRow {
  readonly value: Value
  readonly before: { readonly numerator: number | null | undefined; readonly denominator: number | null | undefined }
  readonly after: { readonly numerator: number | null | undefined; readonly denominator: number | null | undefined }
}

const num = (n: number | null | undefined): number => (n === null || n === undefined || !Number.isFinite(n) ? 0 : n)

const ranked = (parts: ReadonlyArray<Part>, change: number): ReadonlyArray<Part> =>
  // Those that moved with the total first, most first; against it last. Ties keep the rows' order.
  [...parts].sort((a, b) => (change < 0 ? a.change - b.change : b.change - a.change))

const withShares = (parts: ReadonlyArray<Part>, change: number): ReadonlyArray<Part> =>
  change === 0 ? parts : parts.map((part) => ({ ...part, share: part.change / change }))

const relativeOf = (before: number, change: number) => (before === 0 ? {} : { relative: change / before })

/**
 * A sum's or a count's change split across the values of `dimension`: each value's own change.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sum = (dimension: string, rows: ReadonlyArray<SumRow>): Breakdown => {
  const parts = merged(rows).map((row): Part => {
    const before = num(row.before)
    const after = num(row.after)
    return { value: row.value, before, after, change: after - before }
  })
  const before = parts.reduce((total, part) => total + part.before, 0)
  const after = parts.reduce((total, part) => total + part.after, 0)
  const change = after - before
  return {
    dimension,
    kind: "sum",
    before,
    after,
    change,
    ...relativeOf(before, change),
    parts: ranked(withShares(parts, change), change)
  }
}

/**
 * A ratio's change split across the values of `dimension` into each value's rate and mix effects.
 * The ratio is the total numerator over the total denominator; a value with no denominator in a
 * period takes the other period's ratio there, so that its part is all mix (it came or went).
 *
 * @since 0.1.0
 * @category constructors
 */
export const ratio = (dimension: string, rows: ReadonlyArray<RatioRow>): Breakdown => {
  const values = mergedRatios(rows)
  const totals = (side: "before" | "after") =>
    values.reduce(
      (t, row) => ({
        numerator: t.numerator + num(row[side].numerator),
        denominator: t.denominator + num(row[side].denominator)
      }),
      { numerator: 0, denominator: 0 }
    )
  const first = totals("before")
  const second = totals("after")
  const of = (t: { numerator: number; denominator: number }) => (t.denominator === 0 ? 0 : t.numerator / t.denominator)
  const before = of(first)
  const after = of(second)
  const parts = values.map((row): Part => {
    const d0 = num(row.before.denominator)
    const d1 = num(row.after.denominator)
    const w0 = first.denominator === 0 ? 0 : d0 / first.denominator
    const w1 = second.denominator === 0 ? 0 : d1 / second.denominator
    const own0 = d0 === 0 ? undefined : num(row.before.numerator) / d0
    const own1 = d1 === 0 ? undefined : num(row.after.numerator) / d1
    const r0 = own0 ?? own1 ?? 0
    const r1 = own1 ?? own0 ?? 0
    // Midpoint weights: (w0 + w1)/2 · Δr + Δw · (r0 + r1)/2 = w1·r1 − w0·r0, exactly.
    const rate = ((w0 + w1) / 2) * (r1 - r0)
    const mix = (w1 - w0) * ((r0 + r1) / 2)
    return { value: row.value, before: own0 ?? 0, after: own1 ?? 0, change: rate + mix, rate, mix }
  })
  const change = after - before
  return {
    dimension,
    kind: "ratio",
    before,
    after,
    change,
    ...relativeOf(before, change),
    parts: ranked(withShares(parts, change), change)
  }
}

/**
 * Each value's share of a total at one time, beside its share of `base` where given, the values
 * that stand out most against their base first (by share without one).
 *
 * @since 0.1.0
 * @category constructors
 */
export const contribution = (
  rows: ReadonlyArray<
    { readonly value: Value; readonly figure: number | null | undefined; readonly base?: number | null | undefined }
  >
): ReadonlyArray<Contribution> => {
  const total = rows.reduce((t, row) => t + num(row.figure), 0)
  const baseTotal = rows.reduce((t, row) => t + num(row.base), 0)
  const withBase = rows.some((row) => row.base !== undefined)
  const out = rows.map((row): Contribution => {
    const figure = num(row.figure)
    const share = total === 0 ? 0 : figure / total
    if (!withBase || baseTotal === 0) return { value: row.value, figure, share }
    const base_share = num(row.base) / baseTotal
    return { value: row.value, figure, share, base_share, ...(base_share === 0 ? {} : { lift: share / base_share }) }
  })
  return out.sort((a, b) =>
    withBase ? (b.share - (b.base_share ?? 0)) - (a.share - (a.base_share ?? 0)) : b.share - a.share
  )
}

// Rows of one value (the compiler gives one per value and period) are one part.
const merged = (rows: ReadonlyArray<SumRow>): ReadonlyArray<SumRow> => {
  const byValue = new Map<Value, { value: Value; before: number; after: number }>()
  for (const row of rows) {
    const at = byValue.get(row.value) ?? { value: row.value, before: 0, after: 0 }
    byValue.set(row.value, { value: row.value, before: at.before + num(row.before), after: at.after + num(row.after) })
  }
  return [...byValue.values()]
}

const mergedRatios = (rows: ReadonlyArray<RatioRow>): ReadonlyArray<RatioRow> => {
  type Sides = { numerator: number; denominator: number }
  const byValue = new Map<Value, { value: Value; before: Sides; after: Sides }>()
  const add = (a: Sides, b: RatioRow["before"]): Sides => ({
    numerator: a.numerator + num(b.numerator),
    denominator: a.denominator + num(b.denominator)
  })
  for (const row of rows) {
    const zero = { numerator: 0, denominator: 0 }
    const at = byValue.get(row.value) ?? { value: row.value, before: zero, after: zero }
    byValue.set(row.value, { value: row.value, before: add(at.before, row.before), after: add(at.after, row.after) })
  }
  return [...byValue.values()]
}
