/**
 * Phase 5, the measure: a metric from a verb when no phrase named one ("what did Europe spend",
 * "which products sold most"), revenue for a ranking that names no measure ("our biggest
 * customers", said in the answer), or the values themselves ("what categories do we sell"). Then
 * the shapes one semantic query cannot give are declined, each saying what to ask instead.
 *
 * @internal
 */
import { decline, type Measured, type Refused, type Roled } from "./reading.js"
import * as Words from "./words.js"

/** What to measure, or a decline. */
export const read = (roled: Roled): Measured | Refused => {
  const { dimensions, direction, filters, grain, limit, text, tokens, vocabulary, when, window } = roled
  const metrics = [...roled.metrics]
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
  // "Top 2 products per region": a ranking within each group is more than one semantic query.
  if (direction !== undefined && dimensions.length > 1 && /\b(?:per|each|every|within)\s+\w+/.test(text)) {
    return decline(
      "it asks for a ranking within each group, which one semantic query does not give: ask for one group at a " +
        `time, or for the figure by both (for example "${metrics[0]} by ${dimensions.join(" and ")}")`
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
  return { ...roled, metrics, assumed, list }
}
