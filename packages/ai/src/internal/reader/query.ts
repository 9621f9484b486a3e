/**
 * Phase 6, the query: the semantic query the reading comes to. Two or more values of one dimension
 * are compared, never added up into one total; rows that share a name are never added up as one (a
 * name is grouped with what tells them apart); "when was the last order" is the latest day with one.
 *
 * @internal
 */
import type * as SemanticQuery from "@sightline/core/SemanticQuery"
import type { Measured, Read } from "./reading.js"

/** The reading's semantic query, with what the answer says about it. */
export const read = (measured: Measured): Read => {
  const { askedUnit, assumed, connectorId, corrections, direction, grain, limit, metrics, timeDimension, vocabulary } =
    measured
  const { segments, when, window } = measured
  const dimensions = [...measured.dimensions]
  const queryFilters: Array<SemanticQuery.DimensionFilter> = []
  for (const [dimension, values] of measured.filters) {
    if (values.length > 1 && !dimensions.includes(dimension)) dimensions.push(dimension)
    queryFilters.push({
      dimension,
      operator: values.length > 1 ? "in" : "=",
      values: values as unknown as readonly [string | number | boolean, ...Array<string | number | boolean>]
    })
  }
  // Rows that share a name are never added up as one: a name is grouped with what tells them apart,
  // and a name kept to is split by it ("orders of Priya Okafor": one row per customer of the name).
  for (const dimension of [...dimensions]) {
    const identifier = vocabulary.identifiers.get(dimension)
    if (identifier !== undefined && !dimensions.includes(identifier)) {
      dimensions.splice(dimensions.indexOf(dimension) + 1, 0, identifier)
    }
  }
  const unique = new Set(vocabulary.identifiers.values())
  let named: Read["named"]
  for (const filter of queryFilters) {
    const identifier = vocabulary.identifiers.get(filter.dimension)
    if (
      identifier === undefined || filter.values.length > 1 || dimensions.includes(identifier) || when !== undefined ||
      // Kept to one row already ("the second one": its name and its number).
      measured.filters.has(identifier)
    ) {
      continue
    }
    dimensions.push(identifier)
    named = { value: String(filter.values[0]), dimension: filter.dimension, identifier }
  }
  const range = measured.periods !== undefined
    ? { periods: measured.periods.map((p) => ({ start: p.from!, end: p.to! })) }
    : window === undefined
    ? {}
    : {
      ...(window.from === undefined ? {} : { start: window.from }),
      ...(window.to === undefined ? {} : { end: window.to })
    }
  // "When was the last order": the days with one, latest first, and the first of them.
  const dayGrain = when === undefined ? grain : "day"
  const time = window !== undefined || dayGrain !== undefined || timeDimension !== undefined
    ? {
      ...(timeDimension === undefined ? {} : { dimension: timeDimension }),
      ...(dayGrain === undefined ? {} : { grain: dayGrain }),
      ...range
    }
    : undefined
  const ranked = direction !== undefined && metrics.length > 0 &&
    (dimensions.length > 0 || limit !== undefined || askedUnit !== undefined)
  const { notes, per } = measured
  const order: Array<SemanticQuery.OrderBy> | undefined = when !== undefined
    ? [{ by: "time", direction: when === "last" ? "desc" as const : "asc" as const }]
    : ranked
    // "Best selling products per region", with no count: every row, ranked within its group.
    ? [...(per !== undefined && per.limit === undefined ? [{ by: per.dimension }] : []), {
      by: metrics[0]!,
      direction: direction!
    }]
    : undefined
  const query: SemanticQuery.SemanticQuery = {
    metrics,
    ...(dimensions.length === 0 ? {} : { dimensions }),
    ...(time === undefined ? {} : { time }),
    ...(queryFilters.length === 0 ? {} : { filters: queryFilters }),
    ...(segments.length === 0 ? {} : { segments }),
    ...(order === undefined ? {} : { order }),
    ...(when !== undefined ? { limit: 1 } : limit === undefined ? {} : { limit }),
    ...(per?.limit === undefined ? {} : { limit_per: { dimensions: [per.dimension], limit: per.limit } })
  }
  return {
    connectorId,
    query,
    corrections,
    ...(when === undefined || when === "" ? {} : { when }),
    ...(named === undefined ? {} : { named }),
    ...(assumed === undefined ? {} : { assumed }),
    ...(measured.followed === undefined ? {} : { followed: measured.followed }),
    ...(notes === undefined ? {} : { notes }),
    ...(dimensions.some((d) => unique.has(d)) ? { identifiers: dimensions.filter((d) => unique.has(d)) } : {})
  }
}
