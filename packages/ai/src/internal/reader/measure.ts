/**
 * Phase 5, the measure: a metric from a verb when no phrase named one ("what did Europe spend",
 * "which products sold most"), revenue for a ranking that names no measure ("our biggest
 * customers", said in the answer), or the values themselves ("what categories do we sell"). The
 * shapes a measure takes are settled here too: an attribute of a named row ("what does the Aero
 * Plus cost": no measure), the top of what a value classifies ("the best selling laptop"), a
 * ranking within groups ("top 3 in each region"), a share of the whole rather than of a slice, and
 * a measure's unfiltered sibling where its own filter would remove the groups asked for. The shapes
 * one semantic query cannot give are declined, each saying what to ask instead.
 *
 * @internal
 */
import type * as Vocabulary from "../vocabulary.js"
import { decline, type Measured, type Refused, type Roled } from "./reading.js"
import * as Roles from "./roles.js"
import * as Words from "./words.js"

/** What to measure, or a decline. */
export const read = (roled: Roled): Measured | Refused => {
  const { direction, grain, text, tokens, vocabulary, when, window } = roled
  const metrics = [...roled.metrics]
  const dimensions = [...roled.dimensions]
  const filters = new Map(roled.filters)
  let limit = roled.limit
  const notes: Array<string> = []
  // "What does the Aero Pro cost", "when did it launch", "which category is it in": attributes of
  // the rows a name picks out, no measure: the name beside each attribute.
  const picked = [...filters.keys()].filter((d) => Roles.picksOut(vocabulary, d))
  if (metrics.length === 0 && picked.length > 0 && dimensions.some((d) => !filters.has(d))) {
    const attributes = dimensions.filter((d) => !picked.includes(d))
    dimensions.splice(0, dimensions.length, ...picked, ...attributes)
    return {
      ...roled,
      metrics,
      dimensions,
      filters,
      limit: undefined,
      direction: undefined,
      when: undefined,
      assumed: undefined,
      list: true
    }
  }
  // "The biggest customer in each region": what a ranking word picks is ranked, not counted.
  if (direction !== undefined && dimensions.length === 1 && groupNamed(roled, dimensions) !== undefined) {
    for (const match of roled.matches) {
      if (!Words.rankWords.has(roled.tokens[match.start - 1]?.stem ?? "")) continue
      const dimension = match.terms.find((t) => t.target.kind === "dimension" && !dimensions.includes(t.target.name))
      const metric = match.terms.find((t) => t.target.kind === "metric" && metrics.includes(t.target.name))
      if (dimension?.target.kind !== "dimension" || metric?.target.kind !== "metric") continue
      metrics.splice(metrics.indexOf(metric.target.name), 1)
      dimensions.push(dimension.target.name)
    }
  }
  // "The best selling laptop", "our top 3 phones": a ranking of what a value classifies (the
  // products of a category), not the value's total.
  if (
    direction !== undefined && dimensions.length === 0 && grain === undefined && roled.askedUnit === undefined &&
    when === undefined
  ) {
    const classified = [...filters].filter(([d, values]) => values.length === 1 && vocabulary.members.has(d))
    if (classified.length === 1) {
      const [dimension] = classified[0]!
      const member = vocabulary.members.get(dimension)!
      dimensions.push(member)
      // One when what is ranked is said in the singular: "the top customer in Europe", "the best laptop".
      const named = roled.matches.some((m) =>
        m.terms.some((t) => t.target.kind === "dimension" && t.target.name === member)
      )
      limit ??= singular(
          roled,
          (t) => named ? t.kind === "dimension" && t.name === member : t.kind === "value" && t.dimension === dimension
        )
        ? 1
        : undefined
      // "Top 5 customers in Europe": the words that name what is ranked measure nothing (a count of
      // customers per customer); the ranking names no measure.
      for (const match of roled.matches) {
        if (!match.terms.some((t) => t.target.kind === "dimension" && t.target.name === member)) continue
        for (const term of match.terms) {
          if (term.target.kind === "metric" && metrics.includes(term.target.name)) {
            metrics.splice(metrics.indexOf(term.target.name), 1)
          }
        }
      }
    }
  }
  if (metrics.length === 0) {
    // "How many phones did we sell", "which product sold the most": units; "what do we sell" is a
    // list, no measure.
    const counting = /\bhow many\b|\bnumber of\b/.test(text) || direction !== undefined
    const viaVerb = tokens.some((t) => Words.moneyVerbs.has(t.stem))
      ? vocabulary.terms.get("revenue") ?? vocabulary.terms.get("sale")
      : counting && tokens.some((t) => Words.sellVerbs.has(t.stem))
      ? vocabulary.terms.get("unit") ?? vocabulary.terms.get("quantity")
      : undefined
    const metric = viaVerb?.find((t) => t.target.kind === "metric")?.target
    if (metric?.kind === "metric") metrics.push(metric.name)
  }
  // "Our 10 biggest customers", "the best categories": a ranking that names no measure ranks by
  // revenue where the model has it, and the answer says so.
  let assumed: string | undefined
  if (metrics.length === 0 && direction !== undefined && dimensions.length > 0) {
    const money = (vocabulary.terms.get("revenue") ?? vocabulary.terms.get("sale"))?.find((t) =>
      t.target.kind === "metric"
    )?.target
    if (money?.kind === "metric") {
      metrics.push(money.name)
      assumed = money.name
    }
  }
  // "What categories do we sell", "who are our customers in Europe": the values themselves.
  const list = roled.asList && metrics.length === 0 && dimensions.length > 0 && when === undefined
  if (metrics.length === 0 && !list) {
    // "Late deliveries": a value of something ("return reason late delivery"), but no measure of it.
    const of = [...filters].map(([dimension, values]) =>
      `${dimension.replace(/[._]/g, " ")} ${values.map(String).join(" or ")}`
    )
    return decline(
      `I could not tell what to measure${of.length === 0 ? "" : ` of ${of.join(" and ")}`}: name a metric of the ` +
        `semantic model, for example ${vocabulary.metrics.slice(0, 8).join(", ")}`
    )
  }
  if (list && (window !== undefined || grain !== undefined)) {
    return decline(
      "a list of names has no period of its own: ask for a figure of them in it, for example " +
        `"${metrics.length === 0 ? "orders" : metrics[0]} by ${dimensions[0]} last year"`
    )
  }
  // "Top 2 products per region", "the best selling product in each category": a ranking within the
  // group named after "per", "each" or "within", the first of each when the ranked is one.
  let per: Measured["per"]
  if (direction !== undefined && dimensions.length > 1 && /\b(?:per|each|every|within)\s+\w+/.test(text)) {
    const group = groupNamed(roled, dimensions)
    if (group === undefined) {
      return decline(
        "it asks for a ranking within each group, and I could not tell which group: name it after \"each\", for " +
          `example "top 3 ${dimensions[0]} in each ${dimensions[1]}"`
      )
    }
    const ranked = dimensions.filter((d) => d !== group)
    per = {
      dimension: group,
      limit: limit ?? (singular(roled, (t) => t.kind === "dimension" && t.name === ranked[0]) ? 1 : undefined)
    }
    dimensions.splice(0, dimensions.length, group, ...ranked)
    limit = undefined
  } else if (roled.keptPer !== undefined && dimensions.includes(roled.keptPer.dimension)) {
    per = roled.keptPer
    dimensions.splice(0, dimensions.length, per.dimension, ...dimensions.filter((d) => d !== per!.dimension))
    limit = undefined
  }
  // "What share of revenue came from the web": a share of the whole, each value shown beside the
  // others; within the slice alone, the share would be all of it.
  if (metrics.some((m) => vocabulary.shares.has(m)) && dimensions.length === 0 && filters.size > 0) {
    const sliced = [...filters]
    filters.clear()
    for (const [dimension] of sliced) dimensions.push(dimension)
    notes.push(
      `A share is of the whole: every ${sliced.map(([d]) => d.replace(/[._]/g, " ")).join(" and ")} is shown, ${
        sliced.map(([, values]) => values.map(String).join(" or ")).join(" and ")
      } among them`
    )
  }
  if (when === "") {
    return decline(
      `I can say when the first or the last of something was ("when was the last order"); for when a figure ` +
        `peaked, ask which period had the most (for example "which month had the most ${metrics[0]}")`
    )
  }
  if (when !== undefined && dimensions.length > 0) {
    return decline(
      `I can say when the first or the last ${metrics[0]} was over all the rows, not for each ${
        dimensions[0]
      }: ask for one at a time`
    )
  }
  if (limit !== undefined && dimensions.length === 0 && grain === undefined) {
    return decline(
      `I could not tell what to rank the top ${limit} of: name a dimension, for example "top ${limit} products by revenue"`
    )
  }
  // "Orders by status": a measure whose own filters remove some of the groups reads the measure
  // that counts them too, where the model names one; else the answer says the groups are removed.
  for (const metric of [...metrics]) {
    const constraint = vocabulary.constrained.get(metric)
    const hit = constraint?.dimensions.find((d) => dimensions.includes(d) || filters.has(d))
    if (constraint === undefined || hit === undefined) continue
    const by = filters.has(hit)
      ? `${hit.replace(/[._]/g, " ")} ${filters.get(hit)!.map(String).join(" or ")}`
      : `the breakdown by ${hit.replace(/[._]/g, " ")}`
    const defined = `${words(metric)} is defined with ${constraint.filters.join(" and ")}`
    if (constraint.unfiltered === undefined) {
      notes.push(`${defined}, so for ${by} what those filters remove has no figure`)
      continue
    }
    metrics.splice(
      metrics.indexOf(metric),
      1,
      ...(metrics.includes(constraint.unfiltered) ? [] : [constraint.unfiltered])
    )
    notes.push(
      `${defined}: for ${by} I read ${constraint.unfiltered.replace(/[._]/g, " ")}, which counts what they remove too`
    )
  }
  return {
    ...roled,
    metrics,
    dimensions,
    filters,
    limit,
    assumed,
    list,
    ...(per === undefined ? {} : { per }),
    ...(notes.length === 0 ? {} : { notes })
  }
}

const words = (name: string) => {
  const said = name.replace(/[._]/g, " ")
  return `${said.charAt(0).toUpperCase()}${said.slice(1)}`
}

/** The dimension of `dimensions` named right after "per", "each", "every" or "within" ("in each region"). */
const groupNamed = (roled: Roled, dimensions: ReadonlyArray<string>): string | undefined => {
  const { matches, tokens } = roled
  for (const [i, token] of tokens.entries()) {
    if (!/^(?:per|each|every|within)$/.test(token.word)) continue
    // "Within each region", "per every store".
    const at = /^(?:each|every)$/.test(tokens[i + 1]?.word ?? "") ? i + 2 : i + 1
    for (const match of matches) {
      if (match.start !== at) continue
      const term = match.terms.find((t) => t.target.kind === "dimension" && dimensions.includes(t.target.name))
      if (term?.target.kind === "dimension") return term.target.name
    }
  }
  return undefined
}

/** Whether the words that name a target (the first phrase naming it) are singular: "laptop", not "laptops". */
const singular = (roled: Roled, names: (target: Vocabulary.Target) => boolean): boolean => {
  const match = roled.matches.find((m) => m.terms.some((t) => names(t.target)))
  return match !== undefined && roled.tokens.slice(match.start, match.end).every((t) => t.word === t.stem)
}
