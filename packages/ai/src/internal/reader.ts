/**
 * Reads a question into a semantic query (`SemanticQuery`) of one of the chat's semantic models,
 * or declines with the reason. The reading is data: the compiler the agent uses writes its SQL,
 * and the answer states it. Every word of the question is accounted for: it names a part of the
 * model (`vocabulary.ts`), a period (`periods.ts`), or the query's shape ("by", "top 5", "how
 * many"), or is a word that carries nothing ("the", "our"). Any other word declines the question,
 * naming it: a reading that skipped it would answer a broader question than the one asked.
 *
 * @internal
 */
import type * as LanguageModel from "@sightline/core/LanguageModel"
import type * as SemanticQuery from "@sightline/core/SemanticQuery"
import * as Periods from "./periods.js"
import * as Refusals from "./refusals.js"
import * as Vocabulary from "./vocabulary.js"

/** A question read into a query of one connector's model. */
export interface Read {
  readonly connectorId: number
  readonly query: SemanticQuery.SemanticQuery
  /** Words read as others ("reveune" as "revenue", "priya" as "Priya Okafor"), said in the answer. */
  readonly corrections: ReadonlyArray<readonly [said: string, read: string]>
  /** "When was the last order": the query's one row is the day of the first or the last. */
  readonly when?: "first" | "last" | undefined
  /**
   * A name kept to ("orders of Priya Okafor") that rows may share: the query groups by what tells
   * them apart, and the answer says how many there are.
   */
  readonly named?: { readonly value: string; readonly dimension: string; readonly identifier: string } | undefined
  /** The dimensions of the query that tell rows apart (a customer's number): said as they are, not as amounts. */
  readonly identifiers?: ReadonlyArray<string> | undefined
  /** The metric a ranking that named none ranks by ("our biggest customers": revenue), said in the answer. */
  readonly assumed?: string | undefined
}

/** A question the reader will not answer, and why (in words that can follow "I can't answer this: "). */
export interface Declined {
  readonly declined: string
}

/** A word of the question to look up in a dimension's values before it is read: it may be a name. */
export interface Search {
  readonly connectorId: number
  readonly word: string
  readonly dimension: string
}

/** Words to look up in the data: the question is read again with what they found (`Found`). */
export interface Lookup {
  readonly lookup: ReadonlyArray<Search>
}

/** What a lookup found: the values of the dimension that hold the word, or why it failed. */
export interface Found extends Search {
  readonly values: ReadonlyArray<string>
  readonly failed?: string | undefined
}

// Words that carry nothing of their own in a question.
const fillers = new Set(
  [
    "a an the of in on at for to from with and our we us me my i you your is are was were be been do does did done",
    "what whats which who whom how it its this that these those there their they them please show give tell see get",
    "got have has had can could would should may might let lets know find pull up display report want need",
    "much many total overall all any some every value amount figure figures number count numbers so far just about",
    "as by per each across over vs versus or compared compare comparison against than more most less least fewer",
    "fewest top bottom best worst highest lowest biggest largest smallest greatest leading lead rank ranked ranking",
    "breakdown break broken down split grouped group into among between far anything everything here sum summed",
    "make made makes making earn earned earns earning bring brought generate generated spend spent spending pay paid",
    "sell sold selling sells buy bought buying purchase purchased come came comes out into under within during current",
    "kind type like whole entire place placed &"
  ].join(" ").split(/\s+/).filter((w) => w.length > 0).map(Vocabulary.stem)
)

// "The shop", "the company": the business asking, which every figure is of already.
const ourselves = new Set(["shop", "company", "business", "firm", "store"].map(Vocabulary.stem))

const periodish = new Set(
  [
    "year years month months quarter quarters week weeks day days last this previous past prior since before after",
    "until till through to date ytd mtd so far ago recent recently today yesterday current running full calendar",
    "first second third fourth half h1 h2 q1 q2 q3 q4 over time trend trends trending daily weekly monthly quarterly",
    "yearly annual annually end start beginning of the in during"
  ].join(" ").split(/\s+/).map(Vocabulary.stem)
)

const sellVerbs = new Set(["sell", "sold", "selling"].map(Vocabulary.stem))
const moneyVerbs = new Set(
  [
    "make",
    "made",
    "earn",
    "earned",
    "bring",
    "brought",
    "generate",
    "generated",
    "spend",
    "spent",
    "buy",
    "bought",
    "purchase",
    "purchased"
  ]
    .map(Vocabulary.stem)
)
const descending = new Set(
  ["top", "best", "biggest", "largest", "most", "highest", "greatest", "leading", "max", "maximum"].map(Vocabulary.stem)
)
const ascending = new Set(
  ["bottom", "worst", "smallest", "least", "lowest", "fewest", "min", "minimum"].map(Vocabulary.stem)
)
const groupWords = new Set(["by", "per", "each", "every", "across", "which", "what", "among"].map(Vocabulary.stem))
const countWords = new Set(["many", "number", "count"])

interface Token {
  readonly word: string
  readonly stem: string
  covered: boolean
}

interface Match {
  readonly start: number
  readonly end: number
  readonly terms: ReadonlyArray<Vocabulary.Term>
}

// The question as words: short forms spelt out, apostrophes and currency signs read.
const normalize = (question: string): string =>
  question.replace(/[’‘]/g, "'").replace(/\$/g, " dollars ").replace(/#/g, " number ").replace(/'s\b/g, "")
    .split(/(\s+)/).map((part) => {
      const bare = part.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "")
      const long = Vocabulary.shortForms.get(bare)
      return long === undefined ? part : part.toLowerCase().replace(bare, long)
    }).join("").toLowerCase()

const quote = (words: ReadonlyArray<string>) => words.map((w) => `"${w}"`).join(", ")

const listOr = (items: ReadonlyArray<string>) =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`

// "List the categories", "who are our customers in Europe", "what products are in Laptops",
// "which categories do we sell": the rows themselves, not a figure of them.
const listing =
  /^\s*(?:(?:please\s+)?list|who\s+(?:are|is|were)|name\s+(?:the|all|every)|show\s+(?:me\s+)?(?:all|every|the|our)|(?:what|which)\s+(?:\w+\s+){1,2}(?:are|do|does|is|were|did)\b)/
const counting = /\b(?:how many|number of|count|total|sum|average|mean)\b/
// "When was the last order", "when did we first sell a phone".
const whenAsked = /^\s*when\b/
const lastWords = /\b(?:last|latest|most recent|newest|recent|final)\b/
const firstWords = /\b(?:first|earliest|oldest)\b/

/**
 * Reads `question` against the chat's semantic models (the library's, or ones derived from a
 * schema), or declines; undefined when it has no model to read against.
 */
export const read = (
  question: string,
  semantic: ReadonlyArray<LanguageModel.SemanticContext>,
  now: Date,
  found: ReadonlyArray<Found> = []
): Read | Declined | Lookup | undefined => {
  const contexts = semantic
  if (contexts.length === 0) return undefined
  const refusal = Refusals.of(question)
  if (refusal !== undefined) return { declined: refusal.reason }
  const text = normalize(question)
  let best: { readonly result: Read | Declined | Lookup; readonly unknown: number } | undefined
  for (const context of contexts) {
    const vocabulary = Vocabulary.of(context.model, !context.reviewed)
    const result = readWith(text, vocabulary, context.connector_id, now, found)
    const unknown = "unknown" in result ? result.unknown : 0
    if (best === undefined || unknown < best.unknown) {
      best = { result: "unknown" in result ? result.declined : result, unknown }
    }
  }
  return best!.result
}

/**
 * The found values that name something: each value that holds a word as a whole word, and the word
 * itself for the one value that holds it where no other does ("priya" for "Priya Okafor").
 */
const valuesFound = (found: ReadonlyArray<Found>) => {
  const values: Array<{ dimension: string; value: string; also?: string }> = []
  for (const search of found) {
    const holding = search.values.filter((value) => Vocabulary.wordsOf(value).includes(search.word))
    for (const value of holding) {
      const only = found.every((other) =>
        other.word !== search.word ||
        other.values.every((v) => v === value || !Vocabulary.wordsOf(v).includes(search.word))
      )
      values.push({ dimension: search.dimension, value, ...(only ? { also: search.word } : {}) })
    }
  }
  return values
}

const readWith = (
  text: string,
  modelVocabulary: Vocabulary.Vocabulary,
  connectorId: number,
  now: Date,
  allFound: ReadonlyArray<Found>
): Read | Lookup | { readonly declined: Declined; readonly unknown: number } => {
  const decline = (declined: string, unknown = 0) => ({ declined: { declined }, unknown })
  const found = allFound.filter((f) => f.connectorId === connectorId)
  const foundValues = valuesFound(found)
  const vocabulary = foundValues.length === 0 ? modelVocabulary : Vocabulary.withValues(modelVocabulary, foundValues)
  const listed = listing.test(text) && !counting.test(text)
  const when = whenAsked.test(text) ? lastWords.test(text) ? "last" : firstWords.test(text) ? "first" : "" : undefined
  const tokens: Array<Token> = Vocabulary.wordsOf(text).map((word) => ({
    word,
    stem: Vocabulary.stem(word),
    covered: false
  }))
  const corrections: Array<readonly [string, string]> = []

  // 1. Phrases of the model, longest first; a misspelt word is read as the known word it is one
  // edit from.
  const matches: Array<Match> = []
  for (let i = 0; i < tokens.length;) {
    let matched = false
    for (let n = Math.min(vocabulary.longest, tokens.length - i); n >= 1 && !matched; n--) {
      const terms = vocabulary.terms.get(tokens.slice(i, i + n).map((t) => t.stem).join(" "))
      if (terms !== undefined) {
        matches.push({ start: i, end: i + n, terms })
        matched = true
        i += n
      }
    }
    if (matched) {
      // "priya" for the one customer whose name holds it: said in the answer.
      const match = matches.at(-1)!
      const value = match.terms[0]!.target
      if (
        match.end - match.start === 1 && value.kind === "value" &&
        foundValues.some((f) => f.also === match.terms[0]!.said && f.value === value.value)
      ) {
        corrections.push([tokens[match.start]!.word, String(value.value)])
      }
      continue
    }
    const token = tokens[i]!
    if (!fillers.has(token.stem) && !periodish.has(token.stem)) {
      const corrected = Vocabulary.correct(vocabulary, token.stem)
      const terms = corrected === undefined ? undefined : vocabulary.terms.get(corrected)
      if (terms !== undefined) {
        corrections.push([token.word, terms[0]!.said])
        matches.push({ start: i, end: i + 1, terms })
      }
    }
    i++
  }
  for (const match of matches) for (let i = match.start; i < match.end; i++) tokens[i]!.covered = true
  // A metric named by words apart ("orders were cancelled", "orders were placed"): the most
  // specific metric whose name or synonym the question holds, more than one word long, with only
  // words that carry nothing between them.
  const specific: Array<Vocabulary.Term> = []
  const apart = (term: Vocabulary.Term) => {
    const at = term.stems.map((s) => tokens.findIndex((t) => t.stem === s))
    if (at.some((i) => i < 0)) return false
    const [from, to] = [Math.min(...at), Math.max(...at)]
    const between = tokens.slice(from, to + 1).filter((t) => !term.stems.includes(t.stem))
    return between.length <= 3 && between.every((t) => fillers.has(t.stem) && !vocabulary.known.has(t.stem))
  }
  for (const terms of vocabulary.terms.values()) {
    for (const term of terms) {
      if (term.target.kind !== "metric" || new Set(term.stems).size < 2 || !apart(term)) continue
      if (
        specific.some((other) =>
          other.stems.length >= term.stems.length && term.stems.every((s) => other.stems.includes(s))
        )
      ) {
        continue
      }
      specific.push(term)
    }
  }
  for (const term of specific) for (const token of tokens) if (term.stems.includes(token.stem)) token.covered = true

  // 2. The period and the grain.
  const years = Periods.yearsOf(text)
  const window = years ?? Periods.windowOf(text, now)
  if (window !== undefined && "unreadable" in window) return decline(window.unreadable)
  if (window?.from !== undefined && window.from > now.toISOString().slice(0, 10)) {
    return decline(`it asks about a period that has not begun (${window.label}), and I only read what the data records`)
  }
  // "Which month had the most": each month's figure, ranked.
  const askedUnit = /\b(?:which|what)\s+(day|week|month|quarter|year)\b/.exec(text)?.[1] as Periods.Grain | undefined
  const grain = Periods.grainOf(text) ?? askedUnit ?? (years === undefined ? undefined : "year")
  if (window !== undefined || grain !== undefined) {
    for (const token of tokens) {
      if (!token.covered && (periodish.has(token.stem) || Periods.periodWords.has(token.word))) token.covered = true
      if (!token.covered && /^(19|20)\d{2}$/.test(token.word) && window !== undefined) token.covered = true
      if (!token.covered && /^\d{1,3}$/.test(token.word) && window !== undefined && !/\b(top|bottom) \d/.test(text)) {
        token.covered = true
      }
    }
  }

  // 3. The shape: a count of rows to keep ("top 5"), the order, what is grouped.
  const limitFound =
    /\b(?:top|bottom|first|best|worst|biggest|largest|smallest|highest|lowest|which|what)\s+(\d{1,4})\b/.exec(text) ??
      /\b(\d{1,4})\s+(?:best|worst|biggest|largest|smallest|highest|lowest|top|bottom|most|least)\b/.exec(text)
  const limit = limitFound === null ? undefined : Number(limitFound[1])
  if (limitFound !== null) { for (const token of tokens) if (token.word === limitFound[1]) token.covered = true }
  const direction = tokens.some((t) => ascending.has(t.stem))
    ? "asc"
    : tokens.some((t) => descending.has(t.stem))
    ? "desc"
    : undefined
  // "Who are our top 10 customers" ranks them by a figure: no list.
  const asList = listed && direction === undefined

  for (const token of tokens) {
    if (!token.covered && (fillers.has(token.stem) || ourselves.has(token.stem))) token.covered = true
    if (
      !token.covered && when !== undefined &&
      (token.word === "when" || /^(?:first|earliest|oldest|last|latest|recent|newest|final)$/.test(token.word))
    ) {
      token.covered = true
    }
    if (!token.covered && (listed && /^(?:list|who|name|show)$/.test(token.word))) token.covered = true
  }
  const unknown = [...new Set(tokens.filter((t) => !t.covered).map((t) => t.word))]
  if (unknown.length > 0) {
    // A word the model does not know may be a name in the data ("Helix Mini", "Priya Okafor"): the
    // longest word of each run of unknown words is looked up in the values the model does not list,
    // and the question read again with what was found.
    const runs: Array<Array<string>> = []
    tokens.forEach((token, i) => {
      if (token.covered) return
      if (i > 0 && !tokens[i - 1]!.covered) runs.at(-1)!.push(token.word)
      else runs.push([token.word])
    })
    const words = runs.map((run) => run.reduce((a, b) => b.length > a.length ? b : a))
      .filter((word) => word.length >= 3 && !/^\d+$/.test(word))
    const searches = words.length === runs.length && runs.length <= 2
      ? words.flatMap((word) =>
        found.some((f) => f.word === word)
          ? []
          : vocabulary.searchable.map((dimension) => ({ connectorId, word, dimension }))
      )
      : []
    if (searches.length > 0) return { lookup: searches }
    // What a lookup found that the question did not name in full.
    const failed = found.find((f) => unknown.includes(f.word) && f.failed !== undefined)
    if (failed !== undefined) return decline(`I could not look "${failed.word}" up in the data: ${failed.failed}`)
    const holding = found.filter((f) => unknown.includes(f.word))
      .flatMap((f) => f.values.filter((v) => Vocabulary.wordsOf(v).includes(f.word)).map((value) => ({ ...f, value })))
    const notFound = found.some((f) => unknown.includes(f.word)) && holding.length === 0
    return decline(
      holding.length > 0
        ? `"${holding[0]!.word}" is part of ${
          listOr([...new Set(holding.map((f) => f.value))].slice(0, 5).map((v) => `"${v}"`))
        }: say which`
        : `I don't know what ${quote(unknown)} ${unknown.length === 1 ? "picks" : "pick"} out here: the semantic ` +
          `model has no metric, dimension, value or filter by ${unknown.length === 1 ? "that name" : "those names"}` +
          `${
            notFound
              ? `, and no ${listOr(vocabulary.searchable.map((d) => d.replace(/[._]/g, " ")))} in the data is called so`
              : ""
          }. It knows, for example: ${vocabulary.metrics.slice(0, 8).join(", ")}`,
      unknown.length
    )
  }

  // 4. What each phrase names, from its neighbours: "by customer" groups, "how many customers"
  // counts, "top 10 customers by revenue" ranks customers, "which region has the most customers"
  // counts them.
  const before = (match: Match, back = 1) => tokens[match.start - back]?.stem ?? ""
  const ranks = (stem: string) => descending.has(stem) || ascending.has(stem) || /^\d+$/.test(stem)
  const counted = (match: Match) =>
    countWords.has(before(match)) || (before(match) === "of" && countWords.has(before(match, 2)))
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
      if (groupWords.has(before(match)) || asList) return "dimension"
      if (counted(match)) return "metric"
      if (otherMetric) return "dimension"
      if (ranks(before(match))) return hasDimension(match) ? "metric" : "dimension"
      return "metric"
    }
    if (kinds.has("value")) return kinds.has("dimension") && groupWords.has(before(match)) ? "dimension" : "value"
    return [...kinds][0]!
  }
  const said = (match: Match) => tokens.slice(match.start, match.end).map((t) => t.word).join(" ")
  const metrics: Array<string> = []
  // The words each metric was named by.
  const metricWords = new Map<string, ReadonlyArray<string>>()
  const dimensions: Array<string> = []
  const filters = new Map<string, Array<string | number | boolean>>()
  const segments: Array<string> = []
  let timeDimension: string | undefined
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
    if (targets.length > 1) {
      const names = targets.map((t) =>
        "name" in t ? t.name : "dimension" in t ? `${t.dimension} ${String(t.value)}` : ""
      )
      return decline(`"${said(match)}" could mean ${names.join(" or ")}: say which`)
    }
    const target = targets[0]!
    switch (target.kind) {
      case "metric":
        // "revenue per order", "the largest order": a metric where something to group or rank by
        // belongs, and the model has no dimension for it.
        if (
          (groupWords.has(before(match)) || ranks(before(match))) && before(match) !== "what" &&
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
        if (!values.includes(target.value)) values.push(target.value)
        filters.set(target.dimension, values)
        break
      }
      case "segment":
        if (!segments.includes(target.name)) segments.push(target.name)
        break
      case "time":
        // "returned", "signed up": a time dimension says which dates a period reads; with no period
        // it would qualify the rows in a way a semantic query cannot.
        if (window === undefined && grain === undefined) {
          return decline(
            `"${said(match)}" names the dates a period is read on (${target.name.replaceAll("_", " ")}), and the ` +
              "question gives no period: it cannot keep to rows by it alone",
            1
          )
        }
        timeDimension = target.name
        break
    }
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

  // 5. A measure from a verb when no phrase named one: "what did Europe spend", "which products sold most".
  if (metrics.length === 0) {
    // "How many phones did we sell", "which product sold the most": units; "what do we sell" is a
    // list, no measure.
    const counting = /\bhow many\b|\bnumber of\b/.test(text) || direction !== undefined
    const viaVerb = tokens.some((t) => moneyVerbs.has(t.stem))
      ? vocabulary.terms.get("revenue") ?? vocabulary.terms.get("sale")
      : counting && tokens.some((t) => sellVerbs.has(t.stem))
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
  const list = asList && metrics.length === 0 && dimensions.length > 0 && when === undefined
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

  // 6. Two or more values of one dimension are compared, never added up into one total.
  const queryFilters: Array<SemanticQuery.DimensionFilter> = []
  for (const [dimension, values] of filters) {
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
    if (identifier === undefined || filter.values.length > 1 || dimensions.includes(identifier) || when !== undefined) {
      continue
    }
    dimensions.push(identifier)
    named = { value: String(filter.values[0]), dimension: filter.dimension, identifier }
  }
  const range = window === undefined ? {} : {
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
  const order: Array<SemanticQuery.OrderBy> | undefined = when !== undefined
    ? [{ by: "time", direction: when === "last" ? "desc" as const : "asc" as const }]
    : ranked
    ? [{ by: metrics[0]!, direction: direction! }]
    : undefined
  const query: SemanticQuery.SemanticQuery = {
    metrics,
    ...(dimensions.length === 0 ? {} : { dimensions }),
    ...(time === undefined ? {} : { time }),
    ...(queryFilters.length === 0 ? {} : { filters: queryFilters }),
    ...(segments.length === 0 ? {} : { segments }),
    ...(order === undefined ? {} : { order }),
    ...(when !== undefined ? { limit: 1 } : limit === undefined ? {} : { limit })
  }
  return {
    connectorId,
    query,
    corrections,
    ...(when === undefined ? {} : { when }),
    ...(named === undefined ? {} : { named }),
    ...(assumed === undefined ? {} : { assumed }),
    ...(dimensions.some((d) => unique.has(d)) ? { identifiers: dimensions.filter((d) => unique.has(d)) } : {})
  }
}
