/**
 * An investigation: "why did revenue drop in March", "where are returns coming from", planned as
 * semantic queries that the compiler writes and the caller's row-level security bounds, then
 * explained from their rows (`Decomposition`). Nothing here runs a query: `plan` gives the first
 * steps, `drill` the step one level deeper from a level's result, and `breakdown` reads a step's
 * rows. Every figure of the answer comes from a step's rows, and the words say where a change is,
 * never why it happened.
 *
 * - **A change** between two periods: the metric in both, then its change split along each driver
 *   dimension, the values that drove it first; the top value of the first driver is broken down by
 *   the next, up to three levels.
 * - **A contribution** at one time: the metric's shares by each driver, beside its base's (a
 *   ratio's denominator: returns beside the lines sold).
 *
 * A sum or a count splits exactly; a ratio of two of them splits into rate and mix. Other metrics
 * (a distinct count, an average, a share, a period over period) have parts that do not add up, and
 * are not investigated.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Decomposition from "./Decomposition.js"
import { ConnectorId } from "./Ids.js"
import { reachable } from "./internal/semanticSql.js"
import * as SemanticModel from "./SemanticModel.js"
import type { SemanticModel as Model } from "./SemanticModel.js"
import * as SemanticQuery from "./SemanticQuery.js"
import * as SemanticReading from "./SemanticReading.js"

/**
 * A period: `start` ≤ t < `end`, calendar dates in the model's time zone.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Period = Schema.Struct({ start: SemanticQuery.CalendarDate, end: SemanticQuery.CalendarDate })
export type Period = typeof Period.Type

/**
 * What to investigate: a metric over a period, compared with another (a change) or on its own (a
 * contribution), along drivers (the model's when absent), kept to filters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const InvestigationRequest = Schema.Struct({
  connector_id: ConnectorId,
  metric: Schema.String.annotations({ description: "A sum, a count, or a ratio of two of them" }),
  period: Schema.optional(
    Period.annotations({ description: "The period investigated; required with compared_with, all time without" })
  ),
  compared_with: Schema.optional(
    Period.annotations({
      description: "The period it is compared with (usually the one before); absent: where the total comes from"
    })
  ),
  drivers: Schema.optional(
    Schema.Array(Schema.String).pipe(Schema.maxItems(6)).annotations({
      description: "Dimensions to break it down by, in order; the model's drivers when absent"
    })
  ),
  filters: Schema.optional(Schema.Array(SemanticQuery.DimensionFilter)),
  depth: Schema.optional(
    Schema.Int.pipe(Schema.between(1, 3)).annotations({ description: "Levels to drill into the top contributor (2)" })
  )
}).annotations({ identifier: "InvestigationRequest" })
export type InvestigationRequest = typeof InvestigationRequest.Type

/**
 * One step of the plan: a semantic query, at a level (0: the totals; 1: by each driver; 2 and 3:
 * the top contributor of the level above, by the next driver).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Step = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  level: Schema.Int,
  /** The driver it breaks down by (none for the totals). */
  dimension: Schema.optional(Schema.String),
  /** The values of the levels above it keeps to ("Europe", then "Laptops"). */
  within: Schema.Array(Schema.Struct({ dimension: Schema.String, value: Decomposition.Value })),
  query: SemanticQuery.SemanticQuery
}).annotations({ identifier: "InvestigationStep" })
export type Step = typeof Step.Type

/**
 * The plan: how the metric is split, the drivers in order, and the steps known before any runs (the
 * drill-down steps follow from their level's result).
 *
 * @since 0.1.0
 * @category models
 */
export interface Plan {
  readonly request: InvestigationRequest
  readonly kind: "change" | "contribution"
  readonly split: Decomposition.Breakdown["kind"]
  /** How the metric's figures are written (a percent, a currency). */
  readonly format: SemanticModel.Format | undefined
  /** The measures each step reads: the metric, or a ratio's numerator and denominator. */
  readonly measures: ReadonlyArray<string>
  readonly drivers: ReadonlyArray<string>
  readonly depth: number
  readonly steps: ReadonlyArray<Step>
}

/**
 * A metric that an investigation cannot split honestly, or drivers it cannot use: `message` says why.
 *
 * @since 0.1.0
 * @category errors
 */
export class Uninvestigable extends Schema.TaggedError<Uninvestigable>()("Uninvestigable", {
  message: Schema.String
}) {}

const additive = new Set(["sum", "count"])
const words = (name: string) => name.replace(/[._]/g, " ")

/**
 * The plan of an investigation on a model: the totals, then the metric by each driver.
 *
 * @since 0.1.0
 * @category constructors
 */
export const plan = (model: Model, request: InvestigationRequest): Either.Either<Plan, Uninvestigable> =>
  Either.gen(function*() {
    const measure = model.measures.find((m) => m.name === request.metric)
    const derived = model.metrics.find((m) => m.name === request.metric)
    const of = (name: string) => model.measures.find((m) => m.name === name)
    // The table whose rows a measure counts once each: its own, or for a distinct count of a key to
    // another table (lines counting their orders), that table. Along what it reaches, each row has
    // one value, so the parts add up: an order has one region, but may hold lines of two categories.
    const countedIn = (m: SemanticModel.ResolvedMeasure | undefined): string | undefined =>
      m === undefined
        ? undefined
        : additive.has(m.agg)
        ? m.table
        : m.agg === "count_distinct"
        ? model.relationships.find((r) =>
          r.left_table === m.table && r.relationship_columns.length === 1 &&
          r.relationship_columns[0]!.left_column === m.expr?.trim()
        )?.right_table
        : undefined
    const numerator = derived?.type === "ratio" ? of(derived.numerator) : undefined
    const denominator = derived?.type === "ratio" ? of(derived.denominator) : undefined
    const counted = countedIn(measure)
    const [over, under] = [countedIn(numerator), countedIn(denominator)]
    const split = counted !== undefined
      ? { kind: "sum" as const, measures: [measure!.name], tables: [counted], drivers: measure!.drivers }
      : derived?.type === "ratio" && over !== undefined && under !== undefined
      ? {
        kind: "ratio" as const,
        measures: [derived.numerator, derived.denominator],
        tables: [over, under],
        drivers: derived.drivers
      }
      : undefined
    if (split === undefined) {
      return yield* Either.left(
        new Uninvestigable({
          message: measure === undefined && derived === undefined
            ? `no metric named ${request.metric} in model ${model.file.name}`
            : `${words(request.metric)} is not a sum, a count (or a distinct count of another table's rows) or a ` +
              "ratio of two of them: its parts by a dimension would not add up to its change"
        })
      )
    }
    const kind = request.compared_with === undefined ? "contribution" as const : "change" as const
    if (kind === "change" && request.period === undefined) {
      return yield* Either.left(new Uninvestigable({ message: "a change needs the period it is in (period)" }))
    }
    if (kind === "change" && overlap(request.period!, request.compared_with!)) {
      return yield* Either.left(new Uninvestigable({ message: "the periods compared overlap: name periods apart" }))
    }
    // The dimensions every measure reaches along many-to-one relationships; the drivers are what
    // the model declares, or else those of them whose values it lists (the few a driver has).
    const reaches = split.tables.map((table) => new Set(reachable(model, table).keys()))
    const reached = model.tables.filter((t) => reaches.every((r) => r.has(t.name)))
    const qualified = (table: string, name: string) =>
      model.tables.filter((t) => (t.dimensions ?? []).some((d) => d.name === name)).length > 1
        ? `${table}.${name}`
        : name
    const reachedNames = new Set(
      reached.flatMap((t) => (t.dimensions ?? []).flatMap((d) => [d.name, `${t.name}.${d.name}`]))
    )
    const declared = request.drivers ?? split.drivers ?? model.file.drivers
    const drivers = declared !== undefined
      ? declared
      : reached.flatMap((t) =>
        (t.dimensions ?? []).filter((d) => d.values !== undefined).map((d) => qualified(t.name, d.name))
      )
    const unreached = drivers.filter((d) => !reachedNames.has(d))
    if (request.drivers !== undefined && unreached.length > 0) {
      return yield* Either.left(
        new Uninvestigable({
          message: `${words(request.metric)} cannot be broken down by ${unreached.join(", ")}: no many-to-one ` +
            "relationship leads there"
        })
      )
    }
    // A model's drivers are for all its metrics: those a metric cannot reach are left out, and so
    // are those the request keeps to one value (in Europe, all of the change is in Europe).
    const pinned = (driver: string) =>
      (request.filters ?? []).some((f) =>
        f.operator === "=" && f.values.length === 1 &&
        (f.dimension === driver ||
          (!(f.dimension.includes(".") && driver.includes(".")) &&
            f.dimension.split(".").at(-1) === driver.split(".").at(-1)))
      )
    const usable = drivers.filter((d) => reachedNames.has(d) && !pinned(d))
    if (usable.length === 0) {
      return yield* Either.left(
        new Uninvestigable({ message: `the model names no dimension to break ${words(request.metric)} down by` })
      )
    }
    const base = queryOf(split.measures, request, kind, [], undefined)
    const period = SemanticReading.periodWords(request.period?.start, request.period?.end)
    const before = request.compared_with === undefined
      ? undefined
      : SemanticReading.periodWords(request.compared_with.start, request.compared_with.end)
    const steps: Array<Step> = [
      {
        id: "total",
        title: `${capitalized(words(request.metric))} ${
          before === undefined ? period === "all time" ? "over all time" : `in ${period}` : `in ${before} and ${period}`
        }`,
        level: 0,
        within: [],
        query: base
      },
      ...usable.map((dimension): Step => ({
        id: `by_${dimension.replace(/\./g, "_")}`,
        title: `By ${words(dimension)}`,
        level: 1,
        dimension,
        within: [],
        query: queryOf(split.measures, request, kind, [], dimension)
      }))
    ]
    return {
      request,
      kind,
      split: split.kind,
      format: measure?.format ?? derived?.format,
      measures: split.measures,
      drivers: usable,
      depth: request.depth ?? 2,
      steps
    }
  })

/**
 * The step one level below `step`: the value that drove its change most (or, at one time, the
 * largest contributor) broken down by the next driver; none past the plan's depth or drivers.
 *
 * @since 0.1.0
 * @category constructors
 */
export const drill = (investigation: Plan, step: Step, breakdown: Decomposition.Breakdown): Step | undefined => {
  if (step.dimension === undefined || step.level >= investigation.depth) return undefined
  const used = new Set([...step.within.map((w) => w.dimension), step.dimension])
  const next = investigation.drivers.find((d) => !used.has(d))
  const top = breakdown.parts[0]
  if (next === undefined || top === undefined || (investigation.kind === "change" && top.change === 0)) return undefined
  const within = [...step.within, { dimension: step.dimension, value: top.value }]
  return {
    id: `${step.id}_${String(top.value).toLowerCase().replace(/[^a-z0-9]+/g, "_")}_by_${next.replace(/\./g, "_")}`,
    title: `${within.map((w) => String(w.value)).join(", ")} by ${words(next)}`,
    level: step.level + 1,
    dimension: next,
    within,
    query: queryOf(investigation.measures, investigation.request, investigation.kind, within, next)
  }
}

/**
 * A step's rows (in the compiler's columns: its dimension, the period when two are compared, then
 * the measures) read as the metric's change split by the step's dimension, or at one time as each
 * value against the total (a contribution: `before` is the base's share there).
 *
 * @since 0.1.0
 * @category constructors
 */
export const breakdown = (
  investigation: Plan,
  step: Step,
  columns: ReadonlyArray<{ readonly name: string; readonly kind: string }>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>
): Decomposition.Breakdown => {
  const valueAt = step.dimension === undefined ? -1 : columns.findIndex((c) => c.kind === "dimension")
  const periodAt = columns.findIndex((c) => c.kind === "time")
  const measureAt = investigation.measures.map((m) => columns.findIndex((c) => c.name === m))
  const value = (row: ReadonlyArray<unknown>): Decomposition.Value =>
    valueAt < 0 ? null : (row[valueAt] ?? null) as Decomposition.Value
  const numbers = (row: ReadonlyArray<unknown>) => measureAt.map((i) => (row[i] === null ? 0 : Number(row[i])))
  // The period column holds each period's first day; a row of the period investigated is "after".
  const isAfter = (row: ReadonlyArray<unknown>) =>
    investigation.kind === "contribution" || String(row[periodAt]).slice(0, 10) === investigation.request.period!.start
  const dimension = step.dimension ?? "total"
  if (investigation.split === "sum") {
    return Decomposition.sum(
      dimension,
      rows.map((row) => {
        const [figure] = numbers(row)
        return isAfter(row)
          ? { value: value(row), before: investigation.kind === "contribution" ? figure : 0, after: figure }
          : { value: value(row), before: figure, after: 0 }
      })
    )
  }
  return Decomposition.ratio(
    dimension,
    rows.map((row) => {
      const [numerator, denominator] = numbers(row)
      const side = { numerator, denominator }
      const none = { numerator: 0, denominator: 0 }
      return isAfter(row)
        ? { value: value(row), before: investigation.kind === "contribution" ? side : none, after: side }
        : { value: value(row), before: side, after: none }
    })
  )
}

/**
 * A step as it ran: its cell, and its rows read as a breakdown, or why it failed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Ran {
  readonly step: Step
  readonly cellId?: string | undefined
  readonly breakdown?: Decomposition.Breakdown | undefined
  readonly failed?: string | undefined
}

/**
 * Runs an investigation's steps with `runStep`: the totals and each driver four at once, then one
 * level deeper at a time along the first driver (each level needs the one above it). `announce` is
 * told the steps before they run, and again whenever a deeper step joins them.
 *
 * @since 0.1.0
 * @category combinators
 */
export const run = <E, R>(
  investigation: Plan,
  runStep: (step: Step) => Effect.Effect<Ran, E, R>,
  announce: (steps: ReadonlyArray<Step>) => Effect.Effect<void, E, R> = () => Effect.void
): Effect.Effect<ReadonlyArray<Ran>, E, R> =>
  Effect.gen(function*() {
    const steps = [...investigation.steps]
    yield* announce(steps)
    const ran = [...yield* Effect.forEach(steps, runStep, { concurrency: 4 })]
    let at = ran.find((r) => r.step.level === 1 && r.step.dimension === investigation.drivers[0])
    for (;;) {
      const deeper = at?.breakdown === undefined ? undefined : drill(investigation, at.step, at.breakdown)
      if (deeper === undefined) return ran
      steps.push(deeper)
      yield* announce(steps)
      at = yield* runStep(deeper)
      ran.push(at)
    }
  })

/**
 * A step as findings give it: what it read, its cell in a chat, and its largest parts.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FindingsStep = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  level: Schema.Int,
  cell_id: Schema.optional(Schema.String),
  dimension: Schema.optional(Schema.String),
  within: Schema.Array(Schema.Struct({ dimension: Schema.String, value: Decomposition.Value })),
  query: SemanticQuery.SemanticQuery,
  failed: Schema.optional(Schema.String),
  parts: Schema.optional(Schema.Array(Decomposition.Part)),
  /** How many more values the step has than `parts` lists. */
  more_parts: Schema.optional(Schema.Int)
})

/**
 * What an investigation found: the totals, each step's largest parts, and a summary that says where
 * the change is (never why), citing the steps.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Findings = Schema.Struct({
  metric: Schema.String,
  kind: Schema.Literal("change", "contribution"),
  period: Schema.optional(Period),
  compared_with: Schema.optional(Period),
  total: Schema.optional(Schema.Struct({
    before: Schema.Number,
    after: Schema.Number,
    change: Schema.Number,
    relative: Schema.optional(Schema.Number)
  })),
  steps: Schema.Array(FindingsStep),
  summary: Schema.String
}).annotations({ identifier: "InvestigationFindings" })
export type Findings = typeof Findings.Type

/**
 * The most values of a step that findings list (the rest are counted).
 *
 * @since 0.1.0
 * @category constants
 */
export const partsShown = 5

/**
 * What an investigation found, as data and in words: the totals, each step's largest parts with
 * its cell, and a summary that says where the change is (never why), citing the steps it uses.
 *
 * @since 0.1.0
 * @category constructors
 */
export const findings = (investigation: Plan, ran: ReadonlyArray<Ran>): Findings => {
  const { request } = investigation
  const total = ran.find((r) => r.step.level === 0)?.breakdown
  const figure = (n: number) => SemanticModel.formatValue(n, investigation.format)
  const steps = ran.map((r) => ({
    id: r.step.id,
    title: r.step.title,
    level: r.step.level,
    ...(r.cellId === undefined ? {} : { cell_id: r.cellId }),
    ...(r.step.dimension === undefined ? {} : { dimension: r.step.dimension }),
    within: r.step.within,
    query: r.step.query,
    ...(r.failed === undefined ? {} : { failed: r.failed }),
    ...(r.breakdown === undefined ? {} : {
      parts: r.breakdown.parts.slice(0, partsShown),
      ...(r.breakdown.parts.length > partsShown ? { more_parts: r.breakdown.parts.length - partsShown } : {})
    })
  }))
  const metric = capitalized(words(request.metric))
  const period = SemanticReading.periodWords(request.period?.start, request.period?.end)
  const sentences: Array<string> = []
  if (total === undefined) {
    sentences.push(`${metric} could not be read: ${ran.find((r) => r.step.level === 0)?.failed ?? "no rows"}.`)
  } else if (investigation.kind === "change") {
    const before = SemanticReading.periodWords(request.compared_with!.start, request.compared_with!.end)
    const direction = total.change > 0 ? "rose" : total.change < 0 ? "fell" : undefined
    const noun = total.change > 0 ? "rise" : "fall"
    sentences.push(
      direction === undefined
        ? `${metric} did not change from ${before} to ${period} (${figure(total.after)}).`
        : `${metric} ${direction}${
          total.relative === undefined ? "" : ` ${percent(Math.abs(total.relative))}`
        } from ${before} to ${period} (${figure(total.before)} to ${figure(total.after)}).`
    )
    if (direction !== undefined) {
      // The first driver, then as deep as it was drilled: "71% of the fall is in Europe, mostly Laptops".
      const chain = ran.filter((r) =>
        r.step.level >= 1 && r.breakdown !== undefined &&
        (r.step.level === 1 ? r.step.dimension === investigation.drivers[0] : true)
      ).sort((a, b) => a.step.level - b.step.level)
      const [first, ...deeper] = chain
      const top = first?.breakdown?.parts[0]
      if (first !== undefined && top !== undefined && top.share !== undefined && top.share > 0) {
        // "Mostly" as deep as each level's top value holds more than half of its level's change: a
        // deeper level is within the value above it, so the chain stops at the first that does not.
        const mostly: Array<{ readonly value: string; readonly step: string }> = []
        for (const r of deeper) {
          const part = r.breakdown!.parts[0]
          if (part === undefined || r.breakdown!.change === 0 || part.change / r.breakdown!.change <= 0.5) break
          mostly.push({ value: String(part.value), step: r.step.id })
        }
        sentences.push(
          `${percent(top.share)} of the ${noun} is in ${String(top.value)}${
            mostly.length === 0 ? "" : `, mostly ${mostly.map((m) => m.value).join(", then ")}`
          } (${[first.step.id, ...mostly.map((m) => m.step)].map((id) => `step ${id}`).join(", ")}).`
        )
      }
      for (const r of ran.filter((r) => r.step.level === 1 && r !== first && r.breakdown !== undefined)) {
        const part = r.breakdown!.parts[0]
        if (part?.share === undefined || part.share <= 0) continue
        sentences.push(
          `By ${words(r.step.dimension!)}, ${String(part.value)} has ${percent(part.share)} of it (step ${r.step.id}).`
        )
      }
    }
  } else {
    sentences.push(`${metric} ${period === "all time" ? "over all time" : `in ${period}`}: ${figure(total.after)}.`)
    for (const r of ran.filter((r) => r.step.level === 1 && r.breakdown !== undefined)) {
      const parts = r.breakdown!.parts
      if (parts.length === 0) continue
      const by = `By ${words(r.step.dimension!)}`
      if (investigation.split === "ratio") {
        const highest = [...parts].sort((a, b) => b.after - a.after)[0]!
        sentences.push(`${by}, ${String(highest.value)} is highest (${figure(highest.after)}; step ${r.step.id}).`)
      } else {
        const largest = Decomposition.contribution(parts.map((p) => ({ value: p.value, figure: p.after })))[0]!
        sentences.push(`${by}, ${String(largest.value)} gives ${percent(largest.share)} (step ${r.step.id}).`)
      }
    }
  }
  sentences.push("These figures say where; the data does not say why.")
  return {
    metric: request.metric,
    kind: investigation.kind,
    ...(request.period === undefined ? {} : { period: request.period }),
    ...(request.compared_with === undefined ? {} : { compared_with: request.compared_with }),
    ...(total === undefined ? {} : {
      total: {
        before: total.before,
        after: total.after,
        change: total.change,
        ...(total.relative === undefined ? {} : { relative: total.relative })
      }
    }),
    steps,
    summary: sentences.join(" ")
  }
}

const percent = (share: number) => `${(share * 100).toFixed(share >= 0.1 ? 0 : 1)}%`

const queryOf = (
  measures: ReadonlyArray<string>,
  request: InvestigationRequest,
  kind: Plan["kind"],
  within: ReadonlyArray<{ readonly dimension: string; readonly value: Decomposition.Value }>,
  dimension: string | undefined
): SemanticQuery.SemanticQuery => {
  const filters = [
    ...(request.filters ?? []),
    ...within.map((w): SemanticQuery.DimensionFilter => ({
      dimension: w.dimension,
      operator: "=",
      values: [w.value === null ? "" : w.value]
    }))
  ]
  return {
    metrics: measures,
    ...(dimension === undefined ? {} : { dimensions: [dimension] }),
    ...(kind === "change"
      ? { time: { periods: [request.compared_with!, request.period!].sort((a, b) => (a.start < b.start ? -1 : 1)) } }
      : request.period === undefined
      ? {}
      : { time: { start: request.period.start, end: request.period.end } }),
    ...(filters.length === 0 ? {} : { filters })
  }
}

const overlap = (a: Period, b: Period) => a.start < b.end && b.start < a.end

const capitalized = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`
