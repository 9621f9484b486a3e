/**
 * Phase 4, the roles: what each phrase names, from its neighbours. "By customer" groups, "how many
 * customers" counts, "top 10 customers by revenue" ranks customers, "which region has the most
 * customers" counts them. A phrase that could name two things of one kind is asked about
 * (which one). Last, the most specific metric the words name replaces a broader one: "orders were
 * cancelled" asks for cancelled_orders, not orders kept to cancelled ones.
 *
 * @internal
 */
import * as Vocabulary from "../vocabulary.js"
import { type Ambiguous, ask, decline, type Match, type Refused, type Roled, type Shaped } from "./reading.js"
import * as Words from "./words.js"

/** The role of each phrase, or a decline. */
export const read = (shaped: Shaped): Roled | Refused | Ambiguous => {
  const { asList, grain, matches, specific, tokens, window } = shaped
  const before = (match: Match, back = 1) => tokens[match.start - back]?.stem ?? ""
  const ranks = (stem: string) => Words.descending.has(stem) || Words.ascending.has(stem) || /^\d+$/.test(stem)
  const counted = (match: Match) =>
    Words.countWords.has(before(match)) || (before(match) === "of" && Words.countWords.has(before(match, 2)))
  const kindsOf = (match: Match) => new Set(match.terms.map((t) => t.target.kind))
  const onlyMetric = (match: Match) => kindsOf(match).has("metric") && !kindsOf(match).has("dimension")
  // "Returned the most items": words of a metric named apart name nothing else.
  const swallowed = (match: Match) =>
    specific.some((term) => match.terms.some((t) => t.stems.every((s) => term.stems.includes(s))))
  const hasDimension = (except: Match) =>
    matches.some((m) => m !== except && !swallowed(m) && (kindsOf(m).has("dimension") || kindsOf(m).has("value")))
  const kindOf = (match: Match): Vocabulary.Target["kind"] | "qualifier" => {
    const kinds = kindsOf(match)
    const otherMetric = matches.some((m) => m !== match && onlyMetric(m))
    // "Orders from business customers": the noun after a value is what the value is of.
    const afterValue = matches.some((m) => m.end === match.start && kindsOf(m).has("value"))
    if (kinds.has("metric") && kinds.has("dimension") && afterValue && otherMetric) return "qualifier"
    // "The Laptops category": the dimension of the value just said.
    const dimensionOfValue = matches.some((m) =>
      m.end === match.start && m.terms.some(({ target }) =>
        target.kind === "value" &&
        match.terms.some((own) => own.target.kind === "dimension" && own.target.name === target.dimension)
      )
    )
    if (kinds.has("dimension") && !kinds.has("value") && dimensionOfValue) return "qualifier"
    if (kinds.has("metric") && kinds.has("dimension")) {
      if (Words.groupWords.has(before(match)) || asList) return "dimension"
      if (counted(match)) return "metric"
      if (otherMetric) return "dimension"
      if (ranks(before(match))) return hasDimension(match) ? "metric" : "dimension"
      return "metric"
    }
    if (kinds.has("value")) return kinds.has("dimension") && Words.groupWords.has(before(match)) ? "dimension" : "value"
    return [...kinds][0]!
  }
  const said = (match: Match) => tokens.slice(match.start, match.end).map((t) => t.word).join(" ")
  const metrics: Array<string> = []
  // The words each metric was named by.
  const metricWords = new Map<string, ReadonlyArray<string>>()
  const dimensions: Array<string> = []
  const filters = new Map<string, ReadonlyArray<string | number | boolean>>()
  const segments: Array<string> = []
  let timeDimension: string | undefined
  // A time dimension asked "when" of, with no period: an attribute, if a name picks out the rows.
  let undatedTime: { readonly name: string; readonly said: string } | undefined
  // The tables of the metrics the question names, for names that two tables share.
  const metricTables = matches.flatMap((m) =>
    m.terms.flatMap((t) => t.target.kind === "metric" && t.target.table !== undefined ? [t.target.table] : [])
  )
  for (const match of matches) {
    const kind = kindOf(match)
    if (kind === "qualifier") continue
    if (kind !== "metric" && swallowed(match)) continue
    const targets = [
      ...new Map(match.terms.filter((t) => t.target.kind === kind).map((t) => [JSON.stringify(t.target), t.target]))
        .values()
    ]
    // "Subscriptions by status" where invoices have a status too: the status of what is measured.
    if (targets.length > 1) {
      const own = targets.filter((t) =>
        ("name" in t && metricTables.some((table) => t.name.startsWith(`${table}.`))) ||
        ("dimension" in t && metricTables.some((table) => t.dimension.startsWith(`${table}.`)))
      )
      if (own.length === 1) targets.splice(0, targets.length, own[0]!)
    }
    // "Web channel" where sources have a web too: the value of the dimension said after it.
    if (targets.length > 1) {
      const said = targets.filter((t) =>
        t.kind === "value" && matches.some((m) =>
          m.start === match.end &&
          m.terms.some((own) => own.target.kind === "dimension" && own.target.name === t.dimension)
        )
      )
      if (said.length === 1) targets.splice(0, targets.length, said[0]!)
    }
    if (targets.length > 1) {
      const names = targets.map((t) =>
        "name" in t ? t.name : "dimension" in t ? `${t.dimension} ${String(t.value)}` : ""
      )
      // Each meaning in words the model knows: its name, or the value with its dimension.
      const options = targets.slice(0, 5).map((t) => {
        const words = "name" in t
          ? t.name.replace(/[._]/g, " ")
          : "dimension" in t && "value" in t
          ? `${String(t.value)} ${t.dimension.replace(/^.*\./, "").replaceAll("_", " ")}`
          : ""
        return { label: words, words }
      })
      return ask(
        said(match),
        `What do you mean by "${said(match)}"?`,
        options,
        `"${said(match)}" could mean ${names.join(" or ")}: say which`
      )
    }
    const target = targets[0]!
    switch (target.kind) {
      case "metric":
        // "revenue per order", "the largest order": a metric where something to group or rank by
        // belongs, and the model has no dimension for it.
        if (
          (Words.groupWords.has(before(match)) || ranks(before(match))) && before(match) !== "what" &&
          before(match) !== "which" && matches.some((m) => m !== match && onlyMetric(m))
        ) {
          return decline(`the semantic model has no dimension for "${said(match)}" to group or rank by`)
        }
        if (!metrics.includes(target.name)) metrics.push(target.name)
        metricWords.set(target.name, tokens.slice(match.start, match.end).map((t) => t.stem))
        break
      case "dimension":
        if (!dimensions.includes(target.name)) dimensions.push(target.name)
        break
      case "value": {
        const values = filters.get(target.dimension) ?? []
        if (!values.includes(target.value)) filters.set(target.dimension, [...values, target.value])
        break
      }
      case "segment":
        if (!segments.includes(target.name)) segments.push(target.name)
        break
      case "time":
        // "returned", "signed up": a time dimension says which dates a period reads; with no period
        // it would qualify the rows in a way a semantic query cannot, unless it is asked of rows a
        // name picks out ("when did the Aero Pro launch": an attribute, below).
        if (window === undefined && grain === undefined) {
          if (shaped.when !== undefined && undatedTime === undefined) {
            undatedTime = { name: target.name, said: said(match) }
            break
          }
          return undated(said(match), target.name)
        }
        timeDimension = target.name
        break
    }
  }
  if (undatedTime !== undefined) {
    // "When did the Aero Pro launch": the date is an attribute of the rows the name picks out.
    if (metrics.length > 0 || ![...filters.keys()].some((d) => picksOut(shaped.vocabulary, d))) {
      return undated(undatedTime.said, undatedTime.name)
    }
    dimensions.push(undatedTime.name)
  }

  // The most specific metric the question's words name: "orders were cancelled" asks for
  // cancelled_orders, not orders (which leave cancelled ones out) kept to cancelled ones.
  for (const term of specific) {
    if (term.target.kind !== "metric") continue
    const name = term.target.name
    // The metric the term's own words named ("orders" in "orders were cancelled"), if any.
    const at = metrics.findIndex((metric) => (metricWords.get(metric) ?? []).every((w) => term.stems.includes(w)))
    if (metrics.includes(name)) continue
    if (at >= 0) metrics[at] = name
    else metrics.push(name)
    // The words it took are no filter of it too.
    for (const [dimension, values] of filters) {
      const kept = values.filter((v) => !term.stems.includes(Vocabulary.stem(String(v))))
      if (kept.length === 0) filters.delete(dimension)
      else filters.set(dimension, kept)
    }
  }
  return { ...shaped, metrics, dimensions, filters, segments, timeDimension }
}

/** Whether a dimension's values name rows (products, customers): a filter on it picks rows out. */
export const picksOut = (vocabulary: Vocabulary.Vocabulary, dimension: string): boolean =>
  vocabulary.searchable.includes(dimension) || vocabulary.identifiers.has(dimension)

// A time dimension with no period to read it on qualifies the rows in a way no query can.
const undated = (said: string, name: string) =>
  decline(
    `"${said}" names the dates a period is read on (${name.replaceAll("_", " ")}), and the question gives no ` +
      "period: it cannot keep to rows by it alone",
    1
  )
