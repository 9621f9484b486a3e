/**
 * Phase 4b, the follow-up: a question that follows on from the one before ("and per channel?",
 * "just the stores", "same for last year", "what about units?") is merged with that question's
 * reading. What it names replaces the same part of the reading (the measure, the breakdown, a
 * filter on the same dimension, the period, the grain, the order, the count); what it does not
 * name is kept; a breakdown is added rather than replaced when it says "too" or "also".
 *
 * A complete question starts afresh, and nothing of the reading before leaks into it: one that
 * names its own measure, names no row of the answer before ("the second one", "it") and does not
 * start or end as a reply does; a list; or "when was …".
 *
 * @internal
 */
import * as SemanticReading from "@sightline/core/SemanticReading"
import * as Periods from "../periods.js"
import type { Prior, Roled } from "./reading.js"
import * as Words from "./words.js"

/** Whether the question follows on from `prior` rather than starting afresh. */
export const follows = (roled: Roled, prior: Prior | undefined): prior is Prior =>
  prior !== undefined && prior.read.when === undefined && !roled.asList && roled.when === undefined &&
  (roled.metrics.length === 0 || roled.referred.size > 0 || Words.followUpCue.test(roled.text))

const words = (name: string) => name.replace(/[._]/g, " ")
const filterWords = (dimension: string, values: ReadonlyArray<string | number | boolean>) =>
  `${words(dimension)} ${values.map(String).join(" or ")}`
/** The question merged with the reading it follows on from. */
export const read = (roled: Roled, prior: Prior): Roled => {
  const before = prior.read.query
  const identifiers = new Set(prior.read.identifiers ?? [])
  const kept: Array<string> = []
  const changed: Array<string> = []

  // The measure.
  const metrics = roled.metrics.length > 0 ? roled.metrics : before.metrics
  if (roled.metrics.length > 0) changed.push(roled.metrics.map(words).join(" and "))
  else kept.push(before.metrics.map(words).join(" and "))

  // The breakdown: what tells rows apart is added again by the query where it belongs, and a row
  // picked out of the answer before ("the second one") is no longer broken down by.
  const picked = roled.referred.size > 0
  const priorDimensions = (before.dimensions ?? []).filter((d) =>
    !identifiers.has(d) && !(picked && roled.filters.get(d)?.length === 1)
  )
  const adds = Words.addsCue.test(roled.text)
  // "By quarter instead": the grain takes the breakdown's place.
  const regrouped = roled.dimensions.length === 0 && roled.grain !== undefined && Words.replacesCue.test(roled.text)
  const dimensions = regrouped ? [] : roled.dimensions.length === 0
    ? priorDimensions
    : adds
    ? [...priorDimensions, ...roled.dimensions.filter((d) => !priorDimensions.includes(d))]
    : roled.dimensions
  if (roled.dimensions.length > 0) changed.push(`by ${roled.dimensions.map(words).join(" and ")}`)
  if (priorDimensions.length > 0 && !regrouped && (roled.dimensions.length === 0 || adds)) {
    kept.push(`by ${priorDimensions.map(words).join(" and ")}`)
  }

  // The filters: one on a dimension the question names replaces the one before.
  const filters = new Map<string, ReadonlyArray<string | number | boolean>>()
  for (const filter of before.filters ?? []) {
    if (roled.filters.has(filter.dimension)) continue
    filters.set(filter.dimension, filter.values)
    kept.push(filterWords(filter.dimension, filter.values))
  }
  for (const [dimension, values] of roled.filters) {
    filters.set(dimension, values)
    changed.push(filterWords(dimension, values))
  }
  const segments = [...new Set([...(before.segments ?? []), ...roled.segments])]

  // The period and the grain.
  const time = before.time
  // Periods compared before ("Q1 vs Q2") are kept as they were, unless the question names its own.
  const priorPeriods = time?.periods?.map((p) => ({
    from: p.start,
    to: p.end,
    label: SemanticReading.periodWords(p.start, p.end)
  })) ?? (time?.start !== undefined && time.end !== undefined
    ? [{ from: time.start, to: time.end, label: SemanticReading.periodWords(time.start, time.end) }]
    : undefined)
  // "Vs Q1 2024": the period before, compared with the one named, when they do not overlap.
  const compared = Words.comparesCue.test(roled.text) && roled.window?.from !== undefined &&
      roled.window.to !== undefined && roled.periods === undefined && priorPeriods !== undefined &&
      !priorPeriods.some((p) => p.from < roled.window!.to! && roled.window!.from! < p.to)
    ? [...priorPeriods, { from: roled.window.from, to: roled.window.to, label: roled.window.label }].sort((a, b) =>
      a.from < b.from ? -1 : 1
    )
    : undefined
  // Whole years in a row are a series by year, as the question written in full reads them.
  const series = compared === undefined ? undefined : Periods.yearSeries(compared)
  const periods = series !== undefined ? undefined : compared ?? (roled.window !== undefined
    ? roled.periods
    : time?.periods === undefined
    ? undefined
    : priorPeriods)
  const window = series ?? (compared === undefined ? roled.window : undefined) ?? (periods !== undefined
    ? { from: periods[0]!.from, to: periods.at(-1)!.to, label: periods.map((p) => p.label).join(" and ") }
    : time?.start === undefined && time?.end === undefined
    ? undefined
    : { from: time.start, to: time.end, label: SemanticReading.periodWords(time.start, time.end) })
  if (compared !== undefined) {
    kept.push(priorPeriods!.map((p) => p.label).join(" and "))
    changed.push(`compared with ${SemanticReading.periodWords(roled.window!.from, roled.window!.to)}`)
  } else if (window !== undefined) {
    const label = periods !== undefined ? window.label : SemanticReading.periodWords(window.from, window.to)
    if (roled.window !== undefined) changed.push(label)
    else kept.push(label)
  }
  const grain = roled.grain ?? (series === undefined ? undefined : "year") ?? time?.grain
  if (roled.grain !== undefined) changed.push(`by ${roled.grain}`)
  else if (time?.grain !== undefined) kept.push(`by ${time.grain}`)

  // The order and the count, unless the question picked one of the rows they ranked.
  const ranking = picked ? undefined : before.order?.find((o) => o.by !== "time")
  const direction = roled.direction ?? ranking?.direction
  const limit = roled.limit ?? (picked ? undefined : before.limit)
  if (roled.limit !== undefined) changed.push(`the ${roled.direction === "asc" ? "bottom" : "top"} ${roled.limit}`)
  else if (roled.direction !== undefined) changed.push(roled.direction === "asc" ? "lowest first" : "highest first")
  else if (limit !== undefined) kept.push(`the ${direction === "asc" ? "bottom" : "top"} ${limit}`)

  // A ranking within groups is kept while its group is ("the top 3 in each region", then "last year").
  const per = before.limit_per
  const keptPer = per !== undefined && dimensions.includes(per.dimensions[0]!) && dimensions.length > 1
    ? { dimension: per.dimensions[0]!, limit: roled.limit ?? per.limit }
    : undefined
  if (keptPer !== undefined && roled.limit === undefined) {
    kept.push(`the top ${keptPer.limit} in each ${words(keptPer.dimension)}`)
  }
  return {
    ...roled,
    metrics,
    dimensions,
    ...(keptPer === undefined ? {} : { keptPer }),
    filters,
    segments,
    window,
    periods,
    grain,
    timeDimension: roled.timeDimension ?? time?.dimension,
    direction,
    limit,
    followed: { question: prior.question, kept, changed }
  }
}
