/**
 * The offline model's query planner: from a question's words and an introspected schema it builds
 * one read-only query of a few shapes (a count, a sum or an average, an average per row of a table,
 * the top N of a group or within each group, a breakdown by one or two groups, a series over time,
 * a list of names), joining tables along their foreign keys, kept to the period (`periods.ts`) and
 * the listed values the question names. Every table and column comes from the schema; the question
 * only chooses among them. A question these shapes would answer as another question (a share, a
 * growth, a negation, a name the schema does not know) is declined with the reason.
 *
 * @internal
 */
import type * as ConnectorRuntime from "@sightline/core/ConnectorRuntime"
import * as DerivedModel from "@sightline/core/DerivedModel"
import type * as SchemaPrompt from "@sightline/core/SchemaPrompt"
import * as Periods from "./periods.js"
import type { Grain } from "./periods.js"

/** A row's name that a question says, found in the data: "Helix Mini" in `products.name`. */
export interface Found {
  readonly table: string
  readonly column: string
  readonly value: string
}

/** A name the question says that no comment lists, looked up in the data, and what it matched. */
export interface LookedUp {
  readonly phrase: string
  readonly found: ReadonlyArray<Found>
}

/** Why a question has no plan; with `lookup`, the query that looks a name it says up in the data. */
export interface Unplannable {
  readonly unplannable: string
  readonly lookup?: { readonly connectorId: number; readonly sql: string; readonly phrase: string } | undefined
}

/** The aggregate of a plan. */
export type Aggregate = "count" | "sum" | "avg"

/** What the planner decided, and the SQL it wrote. */
export interface Plan {
  readonly connectorId: number
  readonly sql: string
  readonly shape: "total" | "top" | "group" | "series" | "list" | "when"
  readonly aggregate: Aggregate
  /** The result column of the measure and of the group or period. */
  readonly valueColumn: string
  readonly labelColumn?: string | undefined
  /** The second group of a breakdown or a series ("by category and region"), its result column. */
  readonly splitColumn?: string | undefined
  /** A ranking within each value of the first column: how many rows each keeps ("top 3 per region"). */
  readonly rankedPer?: number | undefined
  /** A ranking from the least up ("the lowest revenue", "bottom 5"), for `top` and `group`. */
  readonly ascending?: boolean | undefined
  /** Words for the answer: "revenue", "orders", "in 2025". */
  readonly measureLabel: string
  readonly period?: string | undefined
  /** The listed values the question named, which the query keeps to: "status is cancelled". */
  readonly filters?: ReadonlyArray<{ readonly column: string; readonly values: ReadonlyArray<string> }> | undefined
  /**
   * With a window, the query of the first and the last day its time column holds, and the window's
   * sides: when the window holds nothing, the answer says where the data is.
   */
  readonly span?: {
    readonly sql: string
    /** What the time column dates: "orders". */
    readonly of: string
    readonly from?: string | undefined
    readonly to?: string | undefined
  } | undefined
}

const stopWords = new Set([
  "a",
  "an",
  "the",
  "of",
  "in",
  "on",
  "at",
  "to",
  "for",
  "by",
  "per",
  "and",
  "or",
  "is",
  "are",
  "was",
  "were",
  "be",
  "what",
  "which",
  "who",
  "how",
  "many",
  "much",
  "me",
  "my",
  "our",
  "we",
  "i",
  "you",
  "show",
  "give",
  "list",
  "tell",
  "with",
  "from",
  "each",
  "all",
  "do",
  "does",
  "did",
  "it",
  "its",
  "this",
  "that",
  "last",
  "year",
  "month",
  "top"
])

const words = (text: string): Array<string> => text.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w !== "")

/** The words of a question that can name a table, column or measure. */
const contentWords = (text: string): Array<string> => words(text).filter((w) => !stopWords.has(w) && !/^\d+$/.test(w))

/** Words the library's ontology notes define, each with the columns (`table.column` or `column`) it means. */
export type Glossary = Readonly<Record<string, ReadonlyArray<string>>>

const definition =
  /^\s*(?:[-*]\s*)?["'`]?([a-z][a-z0-9 _-]*?)["'`]?\s*(?::|=|means|is)\s*`?([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*){0,2})`?\s*\.?\s*$/i

/** The definitions of notes text: lines such as `- turnover: order_items.line_total` or `GMV means line_total`. */
export const glossaryOf = (notes: string): Glossary => {
  const glossary: Record<string, Array<string>> = {}
  for (const line of notes.split("\n")) {
    const match = definition.exec(line)
    if (match === null) continue
    const word = match[1]!.trim().toLowerCase()
    glossary[word] = [...(glossary[word] ?? []), match[2]!.toLowerCase()]
  }
  return glossary
}

const synonymsOf = (word: string, glossary: Glossary = {}): ReadonlyArray<string> => [
  ...(Object.hasOwn(glossary, word) ? glossary[word]!.map((target) => target.split(".").pop()!) : []),
  ...(Object.hasOwn(measureSynonyms, word) ? measureSynonyms[word]! : [])
]

// Plurals and past tenses to the word a table or column is named by: "categories" to "category",
// "returned" to "return" (so "customers who returned the most" finds the returns).
const stem = (word: string): string =>
  word.length <= 3
    ? word
    : word.replace(/(?<=^.{4,})ed$/, "").replace(/ies$/, "y").replace(/(ss|us)$/, "$1").replace(
      /(xes|ses)$/,
      (m) => m.slice(0, -2)
    ).replace(/s$/, "")

const numberWords: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  twenty: 20
}

/** Measures people ask for, and the column names and comments that mean them. */
const measureSynonyms: Record<string, ReadonlyArray<string>> = {
  revenue: ["revenue", "line_total", "sales", "amount", "total", "turnover", "gmv"],
  sales: ["revenue", "line_total", "sales", "amount", "total"],
  turnover: ["revenue", "line_total", "sales", "amount", "total"],
  spend: ["amount", "total", "cost", "spend", "line_total"],
  spent: ["amount", "total", "cost", "spend", "line_total"],
  refund: ["refund_amount", "refund", "refunds"],
  quantity: ["quantity", "qty", "units"],
  units: ["quantity", "qty", "units"],
  unit: ["quantity", "units"],
  price: ["unit_price", "price"],
  // "the most expensive products", "the cheapest product": ranked by price.
  expensive: ["unit_price", "price"],
  cheapest: ["unit_price", "price"],
  priciest: ["unit_price", "price"],
  // "best selling", "sold the most", "how many did we sell": units.
  selling: ["quantity", "qty", "units"],
  sold: ["quantity", "qty", "units"],
  sell: ["quantity", "qty", "units"],
  // "the most popular product": the one that sold the most units, as "best selling" is.
  popular: ["quantity", "qty", "units"],
  // "average order size": units.
  size: ["quantity", "qty", "units"],
  value: ["revenue", "line_total", "sales", "amount", "total"]
}

// Measures that do not add up (a price, a rate): their average "per category" is by category,
// never their total over the categories.
const intensive = /price|rate|discount|percent|pct|ratio|score|age$/

// Words that rank by a price, which is called by its column ("unit price").
const priceWords = new Set(["expensive", "cheapest", "priciest"])

// The words of selling, whose measure is called "units sold".
const soldWords = new Set(["selling", "sold", "sell", "sells", "popular"])

const { booleanType, listedValues, numericType, textType, timeType } = DerivedModel

const isNumeric = (c: ConnectorRuntime.Column) =>
  numericType.test(c.type) && !c.primaryKey && c.references === undefined && !/(^|_)id$/.test(c.name)
const isTime = (c: ConnectorRuntime.Column) => timeType.test(c.type)

const quote = (identifier: string): string => `"${identifier.replace(/"/g, "\"\"")}"`
const qualified = (table: string): string => table.split(".").map(quote).join(".")
const shortName = (table: string): string => table.split(".").pop() ?? table

/**
 * The listed values the question names ("cancelled orders", "web"), by column. A value that is a
 * stop word, or names a table ("orders"), is not taken for one.
 */
const filtersOf = (graph: Graph, question: string): ReadonlyArray<DerivedModel.Listed> => {
  const q = question.toLowerCase()
  const asked = new Set(words(question).map(stem))
  const tableWords = new Set(graph.tables.map((t) => stem(shortName(t.name).toLowerCase())))
  const named = (value: string) => {
    const valueWords = words(value)
    if (valueWords.length === 0 || valueWords.every((w) => stopWords.has(w))) return false
    if (valueWords.length === 1) {
      const w = stem(valueWords[0]!)
      return asked.has(w) && !tableWords.has(w)
    }
    return new RegExp(`\\b${value.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`).test(q)
  }
  return graph.tables.flatMap((table) =>
    listedValues(table).flatMap((listed) => {
      const values = listed.values.filter(named)
      return values.length === 0 ? [] : [{ ...listed, values }]
    })
  )
}

/**
 * The yes-or-no columns the question names as a state of the rows ("paid invoices", "unpaid
 * invoices", "inactive accounts"): a boolean column `paid` or `is_active` kept to true when its word
 * is said, to false when it is said with "un", "non" or "in" before it. Left out, "how many unpaid
 * invoices" counted them all.
 */
const flagsOf = (graph: Graph, question: string): ReadonlyArray<DerivedModel.Listed> => {
  const said = new Set(words(question))
  return graph.tables.flatMap((table) =>
    table.columns.flatMap((column) => {
      const word = flagWordOf(graph, column)
      if (word === undefined) return []
      const value = said.has(word)
        ? "true"
        : ["un", "non", "in"].some((no) => said.has(`${no}${word}`))
        ? "false"
        : undefined
      return value === undefined ? [] : [{ table, column, values: [value] }]
    })
  )
}

/** The word a yes-or-no column is said by (`paid`, `is_active` → "active"), unless a table's. */
const flagWordOf = (graph: Graph, column: ConnectorRuntime.Column): string | undefined => {
  if (!booleanType.test(column.type)) return undefined
  const word = column.name.toLowerCase().replace(/^(?:is|has)_/, "")
  return /^[a-z]+$/.test(word) && !graph.tables.some((t) => stem(shortName(t.name)) === stem(word)) ? word : undefined
}

/** The words of the schema's yes-or-no columns. */
const flagWordsOf = (graph: Graph): ReadonlyArray<string> =>
  graph.tables.flatMap((t) => t.columns.flatMap((c) => flagWordOf(graph, c) ?? []))

/** The stemmed words of the schema's table and column names, and of their comments when asked. */
const schemaWords = (graph: Graph, comments: boolean): Set<string> => {
  const known = new Set<string>()
  for (const table of graph.tables) {
    const texts = [
      shortName(table.name),
      ...table.columns.map((c) => c.name),
      ...(comments ? [table.comment ?? "", ...table.columns.map((c) => c.comment ?? "")] : [])
    ]
    for (const text of texts) for (const word of words(text)) known.add(stem(word))
  }
  return known
}

/** The word after a preposition that names a place or a value, written in lower case. */
const lowerName =
  /\b(?:in|from|at|within|for|of|about|on|during|over|throughout|across)\s+(?:(?:the|a|an)\s+)?([a-z][a-z'-]*)/g

/** Words after those of `lowerName` that say how or over what to answer, and name nothing to keep to. */
const answerWords = new Set([
  "total",
  "sum",
  "general",
  "detail",
  "details",
  "order",
  "terms",
  "dollars",
  "usd",
  "eur",
  "euros",
  "percent",
  "percentage",
  "ascending",
  "descending",
  "alphabetical",
  "summary",
  "short",
  "brief",
  "particular",
  "every",
  "any",
  "both",
  "chart",
  "table",
  "graph",
  "past",
  "previous",
  "recent",
  "current",
  "entire",
  "whole",
  "full",
  "same",
  "least",
  "most",
  "now",
  "today",
  "yesterday",
  "so",
  "far",
  "example",
  "instance",
  "course",
  "average",
  "time",
  "database",
  "data",
  "dataset",
  "system",
  "history",
  "period",
  "thousands",
  "millions",
  "few",
  "there",
  "them",
  "these",
  "those",
  "it"
])

/**
 * A name the question keeps to that the schema does not know: "revenue in Europe" over a schema
 * where no comment lists Europe. Answering anyway would answer for every region, so the planner
 * declines. Read as such names: capitalized words after "in", "from", "for", "at", "within", "of"
 * or "about", or anywhere after the first word of a question that is not in title case, and a
 * lower-case word after any of those words or "on". A word that a table, a column, a comment (so
 * a listed value) or a definition has is known.
 */
const unknownNameOf = (
  graph: Graph,
  question: string,
  glossary: Glossary,
  found: ReadonlyArray<Found>
): string | undefined => {
  const known = schemaWords(graph, true)
  for (const word of found.flatMap((name) => words(name.value))) known.add(stem(word))
  for (const word of [...stopWords, ...Periods.periodWords, ...Object.keys(measureSynonyms)]) known.add(stem(word))
  for (const word of Object.keys(glossary).flatMap(words)) known.add(stem(word))
  // A yes-or-no column's word said with "un", "non" or "in" before it ("unpaid") is its false.
  for (const flag of flagWordsOf(graph)) for (const no of ["un", "non", "in"]) known.add(stem(`${no}${flag}`))
  const name =
    /\b(?:in|from|for|at|within|of|about)\s+(?:the\s+)?([A-Z][\p{L}\p{N}&.'-]*(?:\s+(?:&\s+)?[A-Z][\p{L}\p{N}&.'-]*)*)/gu
  // A contraction's ending is no word ("I'm", "Europe's").
  const unknown = (phrase: string) =>
    words(phrase.replace(/['’]\p{L}+/gu, "")).some((word) => !known.has(stem(word)) && !/^\d+$/.test(word))
  for (const match of question.matchAll(name)) if (unknown(match[1]!)) return match[1]
  // A lower-case name where a place or a value stands ("sales in germany", "orders on weekends"):
  // the word after "in", "from", "at", "within", "for", "of", "about", "on", "during", "over",
  // "throughout" or "across", unless it says how to answer ("in total", "for each", "on average",
  // "over time").
  for (const match of question.matchAll(lowerName)) {
    const word = match[1]!
    // "us" is the speaker ("revenue from us"), unless it is "the US".
    if (word === "us" && !/\bthe\s+us$/.test(match[0])) continue
    if (!answerWords.has(word) && !timeWords.has(stem(word)) && !Object.hasOwn(numberWords, word) && unknown(word)) {
      // With the unknown words right after it, up to three: "helix mini" is one name to look up.
      const rest = question.slice(match.index + match[0].length).match(/^(?:\s+[a-z][a-z'-]*){0,2}/)![0]
        .split(/\s+/).filter((next) => next !== "")
      const end = rest.findIndex((next) => !unknown(next))
      return [word, ...rest.slice(0, end === -1 ? rest.length : end)].join(" ")
    }
  }
  // Elsewhere, a capitalized phrase after the first word ("orders did Priya Okafor place"), unless
  // most words it knows are capitalized (a title, where capitals say nothing: "What Were The Top 5
  // Products"); names are capitalized in a sentence too ("revenue of Helix Mini vs Vista Pro").
  // (A name found in the data is known, but says nothing of the question's case.)
  const foundWords = new Set(found.flatMap((name) => words(name.value)))
  const all = question.split(/\s+/).filter((w) =>
    /^[\p{L}]/u.test(w) && !unknown(w) && !words(w).every((part) => foundWords.has(part))
  )
  if (all.length > 0 && all.filter((w) => /^\p{Lu}/u.test(w)).length * 2 > all.length) return undefined
  // A name may open the question ("Helix Mini vs Vista Pro revenue"): two capitalized words or more,
  // the first unknown. A sentence's first word alone is no name: "Revenue by month. Thanks!"
  const opening = /^\s*(\p{Lu}[\p{L}\p{N}&.'-]*(?:\s+(?:&\s+)?\p{Lu}[\p{L}\p{N}&.'-]*)+)/u.exec(question)
  if (opening !== null && unknown(opening[1]!.split(/\s+/)[0]!)) return opening[1]
  const capitalized = /(?<![.!?:;]\s+)(?<=\s)(\p{Lu}[\p{L}\p{N}&.'-]*(?:\s+(?:&\s+)?\p{Lu}[\p{L}\p{N}&.'-]*)*)/gu
  for (const match of question.matchAll(capitalized)) if (unknown(match[1]!)) return match[1]
  // A word that says which of a table's rows ("premium accounts", "large orders") and that nothing
  // in the schema knows: left out, every row was counted.
  const tableNames = new Set(graph.tables.flatMap((t) => namesOf(t).map((name) => name.at(-1)!)))
  const said = words(question)
  for (let i = 1; i < said.length; i++) {
    const word = said[i - 1]!
    if (
      tableNames.has(stem(said[i]!)) && !qualifierWords.has(word) && !answerWords.has(word) &&
      // What a ranking ranks by: "the most common return reasons".
      !(i >= 2 && superlative.test(said[i - 2]!)) &&
      !Object.hasOwn(numberWords, word) && !superlative.test(word) && !/ed$/.test(word) && unknown(word)
    ) return word
  }
  return undefined
}

/** A noun phrase with its indefinite article: "an account", "a plan". */
const article = (phrase: string): string => `${/^[aeiou]/i.test(phrase) ? "an" : "a"} ${phrase}`

/** Words before a table's name that pick none of its rows out: "new customers", "distinct products". */
const qualifierWords = new Set([
  "new",
  "distinct",
  "unique",
  "different",
  "individual",
  "separate",
  "single",
  "all",
  "every",
  "each",
  "any",
  "active",
  "popular",
  "expensive",
  "many",
  "much",
  "more",
  "average",
  "overall",
  "whole",
  "entire",
  "common",
  "frequent"
])

/**
 * The word after "by", "per" or "each" that names nothing ("orders by weekday"), or what "which"
 * ranks ("which weekday has the most orders"): answered, the breakdown was left out and the total
 * given. A table's or a column's word, a measure's ("top 5 products by revenue") or a period's is
 * known.
 */
const unknownGroupOf = (graph: Graph, question: string, glossary: Glossary): string | undefined => {
  const known = schemaWords(graph, false)
  for (
    const word of [
      ...stopWords,
      ...timeWords,
      ...Periods.periodWords,
      ...Object.keys(measureSynonyms),
      ...Object.keys(numberWords),
      ...Object.keys(glossary).flatMap(words).map(stem),
      // "by number of orders", "by total value": a measure's own words.
      ...["number", "count", "amount", "total", "sum", "average", "avg", "mean", "value", "volume", "size"]
    ]
  ) known.add(stem(word))
  const q = question.toLowerCase()
  const asked = [
    ...q.matchAll(/\b(?:by|per|each) ([a-z]+)/g),
    // "which weekday has the most orders": what a ranking ranks.
    ...(superlative.test(q) ? q.matchAll(/\b(?:which|what)(?: \d+)? ([a-z]+)/g) : [])
  ]
  for (const match of asked) if (!known.has(stem(match[1]!))) return match[1]
  return undefined
}

/**
 * Two measures joined by "and" ("total orders and revenue"), outside a list of groups ("by
 * category and region"): each a measure's word or a table's name.
 */
const twoMeasuresOf = (graph: Graph, question: string, glossary: Glossary): readonly [string, string] | undefined => {
  const measureish = new Set([...Object.keys(measureSynonyms), ...Object.keys(glossary), "count", "number"].map(stem))
  for (const table of graph.tables) {
    measureish.add(stem(shortName(table.name)))
    for (const column of table.columns.filter(isNumeric)) measureish.add(stem(column.name))
  }
  const outsideGroups = question.toLowerCase().replace(
    /\b(?:by|per|for each|each|across) [a-z_]+(?:(?:,? and|,) [a-z_]+)*/g,
    " "
  )
  for (const match of outsideGroups.matchAll(/\b([a-z_]+),? (?:and|&) (?:the )?([a-z_]+)\b/g)) {
    const [a, b] = [stem(match[1]!), stem(match[2]!)]
    if (a !== b && measureish.has(a) && measureish.has(b)) return [match[1]!, match[2]!]
  }
  return undefined
}

/** The period a ranking is of: "which month had the most orders", "the top 3 weeks by revenue". */
const rankedGrainOf = (question: string): Grain | undefined => {
  const match = /\b(?:which|what|top|best|bottom|worst)(?: (?:\d+|[a-z]+))? (day|week|month|quarter|year)s?\b/.exec(
    question.toLowerCase()
  )
  return match === null ? undefined : match[1] as Grain
}

const aggregateOf = (question: string): Aggregate | undefined => {
  const q = question.toLowerCase()
  if (/\b(average|avg|mean)\b/.test(q)) return "avg"
  // "How many units" asks for a sum of a quantity, not a count of rows.
  if (/\b(?:how many|number of|count of) (?:[a-z]+ )?(?:units|pieces)\b/.test(q)) return "sum"
  // "The number of items sold": units, as "how many items did we sell" is (order lines are no items).
  if (/\b(?:how many|number of|count of) items (?:were |have been |we )?sold\b/.test(q)) return "sum"
  if (
    /\bhow many [a-z]+(?: [a-z]+)? (?:did|do|does|have|has) (?:we|you|they|i) sell\b|\bhow many [a-z]+ (?:were|was|have been) sold\b/
      .test(q)
  ) {
    return "sum"
  }
  if (/\b(how many|count|number of)\b/.test(q)) return "count"
  if (/\b(total|sum|revenue|sales|turnover|spend|spent|refund|refunds|quantity|units|selling|sold|popular)\b/.test(q)) {
    return "sum"
  }
  return undefined
}

// Words that ask for the first or the last of a ranking: "which region had the highest revenue",
// "the most orders", "the fewest returns"; those of the second kind rank from the least up.
const rankingWords = "top|best|largest|biggest|highest|most|bottom|worst|lowest|smallest|least|fewest|cheapest|priciest"
const superlative = new RegExp(`\\b(?:${rankingWords})\\b`)
const rankedCount = new RegExp(`\\b(?:${rankingWords}) (\\d+|[a-z]+)\\b`)
// "the 3 lowest revenue products": the number before the ranking word.
const countedRanking = new RegExp(`\\b(\\d{1,3}|${Object.keys(numberWords).join("|")}) (?:${rankingWords})\\b`)
const fromTheLeast = /\b(?:bottom|worst|lowest|smallest|least|fewest|cheapest|ascending)\b/

/** The number of rows a ranking asks for ("top 5", "which 3 products"), if it names one. */
const askedLimitOf = (question: string): number | undefined => {
  const q = question.toLowerCase()
  for (const pattern of [rankedCount, countedRanking, /\b(?:which|what) (\d+|[a-z]+)\b/]) {
    const asked = pattern.exec(q)?.[1]
    if (asked === undefined) continue
    const n = Number(asked)
    if (Number.isInteger(n) && n > 0) return Math.min(n, 100)
    if (Object.hasOwn(numberWords, asked)) return numberWords[asked]
  }
  return undefined
}

/** How many rows a ranking shows: the number asked for, else 10. */
const limitOf = (question: string): number | undefined =>
  superlative.test(question.toLowerCase()) ? askedLimitOf(question) ?? 10 : undefined

interface Graph {
  readonly tables: ReadonlyArray<ConnectorRuntime.Table>
  readonly byName: Map<string, ConnectorRuntime.Table>
}

interface Edge {
  readonly from: string
  readonly fromColumn: string
  readonly to: string
  readonly toColumn: string
}

const edgesOf = (graph: Graph, table: string): ReadonlyArray<Edge> => {
  const edges: Array<Edge> = []
  for (const column of graph.byName.get(table)?.columns ?? []) {
    if (column.references !== undefined && graph.byName.has(column.references.table)) {
      edges.push({
        from: table,
        fromColumn: column.name,
        to: column.references.table,
        toColumn: column.references.column
      })
    }
  }
  for (const other of graph.tables) {
    for (const column of other.columns) {
      if (column.references?.table === table && other.name !== table) {
        edges.push({ from: table, fromColumn: column.references.column, to: other.name, toColumn: column.name })
      }
    }
  }
  return edges
}

const isForward = (graph: Graph, edge: Edge): boolean =>
  graph.byName.get(edge.from)?.columns.some((c) => c.name === edge.fromColumn && c.references?.table === edge.to) ??
    false

/**
 * The join path from `start` to `goal` along foreign keys: many-to-one keys only when they reach
 * (so a sum is never multiplied by a fan-out), else any keys.
 */
const path = (graph: Graph, start: string, goal: string): ReadonlyArray<Edge> | undefined =>
  search(graph, start, goal, true) ?? search(graph, start, goal, false)

const search = (graph: Graph, start: string, goal: string, forwardOnly: boolean): ReadonlyArray<Edge> | undefined => {
  if (start === goal) return []
  const seen = new Set([start])
  let frontier: Array<{ table: string; edges: ReadonlyArray<Edge> }> = [{ table: start, edges: [] }]
  while (frontier.length > 0) {
    const next: Array<{ table: string; edges: ReadonlyArray<Edge> }> = []
    for (const node of frontier) {
      for (const edge of edgesOf(graph, node.table)) {
        if (forwardOnly && !isForward(graph, edge)) continue
        if (seen.has(edge.to)) continue
        seen.add(edge.to)
        const edges = [...node.edges, edge]
        if (edge.to === goal) return edges
        next.push({ table: edge.to, edges })
      }
    }
    frontier = next
  }
  return undefined
}

const labelColumnOf = (table: ConnectorRuntime.Table): ConnectorRuntime.Column | undefined => {
  // A column whose values a comment lists (a status, a channel) says what kind a row is, not which
  // row: "the largest order" was "cancelled". With no other text, the key names the row.
  const kinds = new Set(listedValues(table).map((listed) => listed.column))
  return table.columns.find((c) => c.name === "name") ??
    table.columns.find((c) => /(^|_)(name|title|label)$/.test(c.name)) ??
    table.columns.find((c) => c.name === "code") ??
    table.columns.find((c) => textType.test(c.type) && !c.primaryKey && !kinds.has(c)) ??
    table.columns.find((c) => c.primaryKey)
}

/** How many rows a list shows. */
export const listLimit = 100

/** The column that names a table's rows, for a list of them: a name, title, label or code. */
const namedColumnOf = (table: ConnectorRuntime.Table): ConnectorRuntime.Column | undefined => {
  const label = labelColumnOf(table)
  return label !== undefined && /(^|_)(name|title|label|code)$/.test(label.name) ? label : undefined
}

/** A table as an answer says it: "order items". */
const spoken = (table: ConnectorRuntime.Table): string => words(shortName(table.name)).join(" ")

/** What a column is called in a result and an answer: a table's name, code or key is the table's ("region"). */
const labelOf = (table: ConnectorRuntime.Table, column: ConnectorRuntime.Column): string =>
  column.name === "name" || column.name === "code" || column.primaryKey ? stem(shortName(table.name)) : column.name

/**
 * The names a table goes by, each as its stemmed words: its own ("order items") and a comment's
 * first clause when that is as short as a name ("Order lines"; not "Returned order lines and their
 * refunds").
 */
const namesOf = (table: ConnectorRuntime.Table): ReadonlyArray<ReadonlyArray<string>> => {
  const alias = words((table.comment ?? "").split(/[;.:(]/)[0]!).map(stem)
  return [words(shortName(table.name)).map(stem), ...(alias.length > 0 && alias.length <= 3 ? [alias] : [])]
}

/** A question's words, stemmed, as one text that a name of several words can be looked for in. */
const saidOf = (question: string): string => `_${words(question).map(stem).join("_")}_`

/** Whether a question says a table's name of several words ("order items", "order lines") in full. */
const saysInFull = (table: ConnectorRuntime.Table, said: string): boolean =>
  namesOf(table).some((name) => name.length > 1 && said.includes(`_${name.join("_")}_`))

/** Words that say how to aggregate, not what. */
const aggregateWords = new Set(["total", "sum", "average", "avg", "mean", "count", "number"])

/** Scores how well a table's name matches the words (whole words only). */
const tableScore = (table: ConnectorRuntime.Table, asked: ReadonlySet<string>, said: string): number => {
  const name = shortName(table.name)
  // Said in full, a name outweighs the shorter one inside it: "order items" are not orders.
  if (saysInFull(table, said)) return 12
  if (asked.has(stem(name))) return 10
  return words(name).map(stem).filter((w) => asked.has(w)).length * 3
}

interface Choice {
  readonly table: ConnectorRuntime.Table
  readonly column: ConnectorRuntime.Column
  readonly score: number
}

const measureOf = (graph: Graph, questionWords: ReadonlyArray<string>, glossary: Glossary): Choice | undefined => {
  const asked = new Set(questionWords.map(stem))
  let best: Choice | undefined
  for (const table of graph.tables) {
    for (const column of table.columns.filter(isNumeric)) {
      let score = 0
      const columnWords = new Set(words(column.name).map(stem))
      // A comment's words, but not the columns it names (the table's others, or any snake_case
      // name): "quantity × unit_price" in line_total's comment is not about units.
      const others = new Set(table.columns.filter((c) => c !== column).map((c) => c.name))
      const commentWords = new Set(
        (column.comment ?? "").toLowerCase().split(/[^a-z0-9_]+/).filter((w) =>
          w !== "" && !w.includes("_") && !others.has(w)
        ).map(stem)
      )
      for (const word of questionWords) {
        const w = stem(word)
        // What the word names best: the whole column ("quantity", which outweighs a part of another
        // column's name and its comment together: "quantity per order line" is not the line total),
        // a measure it stands for ("units" for quantity), or one word of the name ("unit" of
        // unit_price), worth less.
        let named = stem(column.name) === w ? 9 : columnWords.has(w) ? 3 : 0
        for (const synonym of synonymsOf(word).length > 0 ? synonymsOf(word) : synonymsOf(w)) {
          named = Math.max(named, column.name === synonym ? 6 : columnWords.has(stem(synonym)) ? 2 : 0)
        }
        score += named
        if (commentWords.has(w)) score += 5
        // The library's own definitions weigh more than the built-in synonyms.
        for (const target of Object.hasOwn(glossary, word) ? glossary[word]! : []) {
          const [tableName, columnName] = target.includes(".")
            ? [target.slice(0, target.lastIndexOf(".")), target.split(".").pop()!]
            : [undefined, target]
          if (column.name === columnName && (tableName === undefined || table.name.endsWith(tableName))) score += 12
        }
      }
      if (score > 0 && asked.has(stem(shortName(table.name)))) score += 1
      if (score > 0 && (best === undefined || score > best.score)) best = { table, column, score }
    }
  }
  return best
}

/**
 * The phrases naming what to group by, each a word or two, in order: what a ranking ranks ("top N
 * products", "the most common reasons", and in a question that asks for the first of a ranking the
 * words after "which" or "what"), then what follows "by", "per", "for each" or "across", what a
 * second "and" adds to it ("by category and region"), and what is listed by a measure ("list
 * regions by revenue").
 */
const groupPhrasesOf = (question: string): ReadonlyArray<ReadonlyArray<string>> => {
  const q = question.toLowerCase()
  const found: Array<ReadonlyArray<string>> = []
  for (
    const pattern of [
      // Not after "most" or "fewest": in "the most orders", what follows is what is counted.
      /\b(?:top|best|bottom|worst|largest|biggest|highest|lowest|cheapest|priciest|(?:most|least) expensive) (?:\d+|[a-z]+) (?=([a-z_]+)(?: ([a-z_]+))?)/g,
      /\b(?:top|best|bottom|worst|largest|biggest|highest|lowest|cheapest|priciest|(?:most|least) expensive) (?=([a-z_]+)(?: ([a-z_]+))?)/g,
      /\b(?:most|least) (?:common|frequent|popular|usual) (?=([a-z_]+)(?: ([a-z_]+))?)/g,
      ...(superlative.test(q) ? [/\b(?:which|what|who)(?: \d+)? (?=([a-z_]+)(?: ([a-z_]+))?)/g] : []),
      /\b(?:by|per|for each|each|across) (?=([a-z_]+)(?: ([a-z_]+))?)/g,
      // "list regions by revenue": what is listed by a measure is what is grouped.
      /\b(?:list|show|rank|compare)(?: me)?(?: the| all)? (?=([a-z_]+) by\b)/g
    ]
  ) {
    // The phrase is read ahead, not taken: in "per customer by region", "by region" is one too.
    for (const match of q.matchAll(pattern)) {
      found.push(match.slice(1).filter((w): w is string => w !== undefined && !Object.hasOwn(numberWords, w)))
    }
  }
  // The rest of a list: "by category, region and channel", "by customer segment and product category".
  for (
    const match of q.matchAll(
      /\b(?:by|per|for each|each|across) ([a-z_]+(?: (?!and\b)[a-z_]+)?(?:(?:,? and|,) [a-z_]+(?: (?!and\b)[a-z_]+)?)+)/g
    )
  ) {
    for (const item of match[1]!.split(/,? and |, /).slice(1)) found.push(item.split(" "))
  }
  return found
}

const timeWords = new Set(["day", "week", "month", "quarter", "year", "time", "date"])

interface Group {
  readonly table: ConnectorRuntime.Table
  readonly column: ConnectorRuntime.Column
  /** Grouping by a column of a table ("by channel") rather than by the rows of a table ("by region"). */
  readonly byColumn: boolean
}

/** The group a word names: a column first ("by channel", "by segment"), then a table ("by region"). */
const groupNamed = (graph: Graph, word: string): Group | undefined => {
  const w = stem(word)
  if (timeWords.has(w)) return undefined
  for (const table of graph.tables) {
    const column = table.columns.find((c) =>
      stem(c.name) === w && !c.primaryKey && c.references === undefined && !isNumeric(c)
    )
    if (column !== undefined) return { table, column, byColumn: true }
  }
  const table = graph.tables.find((t) => stem(shortName(t.name)) === w)
  const label = table === undefined ? undefined : labelColumnOf(table)
  return table !== undefined && label !== undefined ? { table, column: label, byColumn: false } : undefined
}

/**
 * What to group by: the group each phrase names ("revenue by category and region"), and the period
 * a phrase names ("by region and month").
 */
const groupsOf = (graph: Graph, question: string): { groups: ReadonlyArray<Group>; grain?: Grain | undefined } => {
  const groups: Array<Group> = []
  let grain: Grain | undefined
  for (const phrase of groupPhrasesOf(question)) {
    const period = stem(phrase[0] ?? "")
    if (timeWords.has(period)) {
      if (period !== "time" && period !== "date") grain ??= period as Grain
      continue
    }
    // Two words that name a table together ("per order line") name neither word's.
    const whole = tableAt(graph, phrase.slice(0, 2).join(" "), 2)
    const wholeLabel = whole === undefined ? undefined : labelColumnOf(whole)
    const [head, next] = phrase.map((word) => groupNamed(graph, word))
    // Of two words, the second when it qualifies the first: "return reasons" (a column of
    // returns), "product category" (the table a product refers to); else the first that names one.
    const qualifies = head !== undefined && next !== undefined &&
      (next.table === head.table || search(graph, head.table.name, next.table.name, true) !== undefined)
    const group = whole !== undefined && wholeLabel !== undefined
      ? { table: whole, column: wholeLabel, byColumn: false }
      : qualifies
      ? next
      : head ?? next
    if (group !== undefined && !groups.some((g) => g.table === group.table && g.column === group.column)) {
      groups.push(group)
    }
  }
  return { groups, grain }
}

const timeColumnNear = (
  graph: Graph,
  start: string,
  asked: ReadonlySet<string> = new Set()
): { table: ConnectorRuntime.Table; column: ConnectorRuntime.Column } | undefined => {
  // The time of what the question says happened first: "subscriptions cancelled in 2025" are
  // those whose cancelled_at is in 2025, not those started then.
  const said = (c: ConnectorRuntime.Column) => {
    const named = words(c.name.replace(/_(?:at|on|date|time)$/, "")).map(stem)
    return named.length > 0 && named.every((w) => asked.has(w))
  }
  const rank = (c: ConnectorRuntime.Column) =>
    said(c)
      ? -1
      : /ordered_at|order_date|sold_at|sale_date|transaction_date|occurred_at/.test(c.name)
      ? 0
      : /created_at|date|_at$|_on$/.test(c.name)
      ? 1
      : 2
  const pick = (table: ConnectorRuntime.Table) => table.columns.filter(isTime).sort((a, b) => rank(a) - rank(b))[0]
  const own = graph.byName.get(start)
  const direct = own === undefined ? undefined : pick(own)
  if (own !== undefined && direct !== undefined) return { table: own, column: direct }
  // The nearest table along many-to-one keys (an order line's time is its order's).
  const seen = new Set([start])
  let frontier = [start]
  while (frontier.length > 0) {
    const next: Array<string> = []
    for (const name of frontier) {
      for (const column of graph.byName.get(name)?.columns ?? []) {
        const target = column.references?.table
        if (target === undefined || seen.has(target) || !graph.byName.has(target)) continue
        seen.add(target)
        const table = graph.byName.get(target)!
        const time = pick(table)
        if (time !== undefined) return { table, column: time }
        next.push(target)
      }
    }
    frontier = next
  }
  return undefined
}

/**
 * The table an average is taken per: "average revenue per customer", or "average order value". A
 * table's name only: "average revenue per channel", a column, is a breakdown by it.
 */
const perOf = (
  graph: Graph,
  question: string
): { readonly table: ConnectorRuntime.Table; readonly asValue?: string } | undefined => {
  const q = question.toLowerCase()
  const perWord = tableAt(graph, /\b(?:average|avg|mean)\b(?: [a-z_]+){0,3}? per ([a-z_]+(?: [a-z_]+)?)/.exec(q)?.[1])
  if (perWord !== undefined) return { table: perWord }
  const asValue = /\b(?:average|avg|mean) ([a-z_]+) (value|size|amount)\b/.exec(q)
  const valued = tableAt(graph, asValue?.[1])
  if (valued !== undefined) return { table: valued, asValue: asValue![2]! }
  // "How many orders does the average customer place", "on average, how many items are in an order".
  const table = tableAt(graph, /\b(?:the|an?) (?:average|typical) ([a-z_]+(?: [a-z_]+)?)/.exec(q)?.[1]) ??
    // Not "for each region": that is a breakdown.
    tableAt(graph, /\b(?:in|per|for|of) (?:an?|one) ([a-z_]+(?: [a-z_]+)?)/.exec(q)?.[1])
  return table === undefined ? undefined : { table }
}

/**
 * The table that `text` starts with: by a name of two words ("order lines"), else of one ("order")
 * unless `least` is 2.
 */
const tableAt = (graph: Graph, text: string | undefined, least = 1): ConnectorRuntime.Table | undefined => {
  const said = words(text ?? "").slice(0, 2).map(stem)
  for (const n of [2, 1]) {
    if (said.length < n || n < least) continue
    const table = graph.tables.find((t) => namesOf(t).some((name) => name.join("_") === said.slice(0, n).join("_")))
    if (table !== undefined) return table
  }
  return undefined
}

/** Whether a question asks for the latest or the earliest: "the last order", "our first customer". */
const extremeOf = (question: string): "max" | "min" | undefined => {
  // Not a period's "last" or "first": "last year", "the first quarter".
  const word =
    /\b(last|latest|most recent|newest|first|earliest|oldest)\b(?!\s+(?:year|half|quarter|month|week|day|\d|q[1-4]))/i
      .exec(question)?.[1]?.toLowerCase()
  return word === undefined ? undefined : ["first", "earliest", "oldest"].includes(word) ? "min" : "max"
}

/**
 * The names found in the data as conditions, one per column: two customers called Priya Okafor are
 * one, and "Helix Mini and Vista Pro" are either (compared side by side when the question compares).
 */
const foundFilters = (graph: Graph, found: ReadonlyArray<Found>): ReadonlyArray<DerivedModel.Listed> => {
  const byColumn = new Map<
    string,
    { table: ConnectorRuntime.Table; column: ConnectorRuntime.Column; values: Set<string> }
  >()
  for (const row of found) {
    const table = graph.byName.get(row.table)
    const column = table?.columns.find((c) => c.name === row.column)
    // The row's name matched the looked-up phrase but for case, so it holds no backslash either.
    if (table === undefined || column === undefined || row.value.includes("\\")) continue
    const key = `${row.table}.${row.column}`
    const entry = byColumn.get(key) ?? { table, column, values: new Set<string>() }
    entry.values.add(row.value)
    byColumn.set(key, entry)
  }
  return [...byColumn.values()].map(({ column, table, values }) => ({ table, column, values: [...values] }))
}

/** "a, b or c". */
const listOr = (items: ReadonlyArray<string>): string =>
  items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`

/** A text as an SQL literal, on PostgreSQL and MySQL alike: no value here holds a backslash. */
const literal = (value: string): string => `'${value.replace(/'/g, "''")}'`

/**
 * A name the question says that nothing in the schema knows ("Helix Mini"): the query that looks it
 * up among the names of the tables that have them (products, customers), exactly but for case, or,
 * once looked up and not found, why the question is declined.
 */
const lookUpName = (
  phrase: string,
  graph: Graph,
  lookedUp: ReadonlyArray<LookedUp>,
  connectorId: number,
  q: (identifier: string) => string,
  table: (name: string) => string
): Unplannable => {
  const named = graph.tables.flatMap((t) => {
    const column = namedColumnOf(t)
    return column === undefined || column.primaryKey ? [] : [{ t, column }]
  })
  const unplannable = `"${phrase}" is not a table, a column or a value that the schema's comments list` +
    (named.length === 0 ? "" : `, nor the name of ${article(listOr(named.map(({ t }) => stem(shortName(t.name)))))}`) +
    ", so I cannot keep to it (a table's comment such as \"region is Europe or Asia\" lists a column's values)"
  // Looked up once; a name with a backslash is none (it would read differently on MySQL).
  if (named.length === 0 || lookedUp.some((name) => name.phrase === phrase) || phrase.includes("\\")) {
    return { unplannable }
  }
  const sql =
    named.map(({ column, t }) =>
      `SELECT ${literal(t.name)} AS ${q("table_name")}, ${literal(column.name)} AS ${q("column_name")}, ` +
      `t.${q(column.name)} AS ${q("value")}\nFROM ${table(t.name)} AS t\nWHERE lower(t.${q(column.name)}) = lower(${
        literal(phrase)
      })`
    ).join("\nUNION ALL\n") + "\nLIMIT 5"
  return { unplannable, lookup: { connectorId, sql, phrase } }
}

/** The table a bare "per" names ("revenue per order") when its rows have no name, only a key. */
const keyedPerOf = (graph: Graph, question: string): ConnectorRuntime.Table | undefined => {
  const table = tableAt(graph, /\bper ([a-z_]+(?: [a-z_]+)?)/.exec(question.toLowerCase())?.[1])
  return table !== undefined && labelColumnOf(table)?.primaryKey === true ? table : undefined
}

/**
 * Why a question cannot be answered by one query of these shapes, if it cannot: a share, a rate, a
 * growth, a median, a threshold, a negation, two measures, or a name or a group the schema does not
 * know. Each of these
 * was answered as another question before: a count, the total of everything, its opposite.
 */
const refusalOf = (
  question: string,
  graph: Graph,
  glossary: Glossary,
  unreadable: Periods.Unreadable | undefined,
  found: ReadonlyArray<Found>
): string | { readonly unknownName: string } | undefined => {
  if (/\b(share|shares|percentage|percent|proportion|fraction|ratio)\b/i.test(question)) {
    return "I cannot work out shares or percentages, only counts, sums and averages"
  }
  // A rate ("the refund rate") is a share too, unless a column is called one.
  if (
    /\brates?\b/i.test(question) &&
    !graph.tables.some((t) => t.columns.some((col) => words(col.name).includes("rate")))
  ) {
    return "I cannot work out rates or percentages, only counts, sums and averages"
  }
  // A listed value may hold a word of these ("changed mind", a return's reason): read without them.
  const listedText = graph.tables.flatMap(listedValues).flatMap((listed) => listed.values)
    .reduce((text, value) => text.split(value.toLowerCase()).join(" "), question.toLowerCase())
  if (
    /\b(grew|grow|grows|growth|growing|increase[ds]?|decrease[ds]?|declined|yoy)\b|\byear over year\b/i.test(
      question
    ) ||
    /\b(?:change[ds]?|changing)\b/.test(listedText)
  ) {
    return "I cannot work out growth or change between periods; ask for a series instead, " +
      "for example \"revenue by year\", and compare its rows"
  }
  // "Which day of the week has the most orders" named the day grain, and ranked single dates.
  if (/\bdays? of (?:the )?(?:week|month|year)\b|\b(?:hours?|times?) of (?:the )?day\b/i.test(question)) {
    return "I cannot group by the day of the week or the time of day, only by calendar periods " +
      "(days, weeks, months, quarters, years)"
  }
  // "How many orders had a discount?": rows that have some amount are a condition on its value,
  // which these shapes do not keep to; every order was counted.
  const amountHad = [...question.toLowerCase().matchAll(owned)].map((match) => match[1]!).find((word) =>
    !graph.tables.some((t) => stem(shortName(t.name)) === stem(word)) &&
    graph.tables.some((t) => t.columns.some((c) => isNumeric(c) && !c.primaryKey && stem(c.name) === stem(word)))
  )
  if (amountHad !== undefined) {
    return `I cannot keep to rows by whether they have a ${amountHad} (a condition on its value), only count, ` +
      `sum or average it: ask for example for "the average ${amountHad}"`
  }
  // "Why" is declined before planning (`refusals.ts`): a number is no reason.
  if (/\b(median|percentile|p[0-9]{2}|mode|standard deviation|stddev|variance)\b/i.test(question)) {
    return "I cannot work out medians, percentiles or spreads, only counts, sums and averages"
  }
  if (
    /\b(?:more|less|fewer|greater|higher|lower) than \$?\d|\bat (?:least|most) \$?\d|\b(?:over|under|above|below) \$?(?!(?:19|20)\d\d\b)\d/i
      .test(question)
  ) {
    return "I cannot keep to thresholds such as \"more than 10\", only to periods and listed values"
  }
  // A negation ("products that were never returned") asks for what a query of these shapes leaves
  // out; a listed value may hold one ("not as described") and is no negation.
  if (
    /\b(?:never|not|without|none|no|excluding|exclude|except|besides|other than|apart from)\b|n't\b/.test(listedText)
  ) {
    return "I cannot answer for what is missing or left out (never, not, without, except), only for what is there"
  }
  // A period read in part ("late 2025") says why before its words ("late") are taken for a name.
  if (unreadable !== undefined) return unreadable.unreadable
  const unknownName = unknownNameOf(graph, question, glossary, found)
  if (unknownName !== undefined) return { unknownName }
  const twoMeasures = twoMeasuresOf(graph, question, glossary)
  if (twoMeasures !== undefined) {
    return `I answer one measure at a time: ask for ${twoMeasures[0]} and for ${twoMeasures[1]} separately`
  }
  const unknownGroup = unknownGroupOf(graph, question, glossary)
  if (unknownGroup !== undefined) return `I could not tell what "${unknownGroup}" is: no table or column is called that`
  return undefined
}

/** Words that have a table's rows placed or owned by the rows counted: "customers who placed orders". */
const owned = /\b(?:with|placed|made|have|has|had|having|any)\s+(?:an?\s+|any\s+|one\s+or\s+more\s+)?([a-z_]+)/g
// "Active customers" are those who bought in the period: a customer row says nothing of activity.
const buyingWords = /\b(?:bought|buy|buys|purchased|purchase|purchases|ordered|shopped|active|sold)\b/

/**
 * The tables a question names as what the rows it counts did or have: a past tense ("returned"),
 * a table after "with", "placed" or "have", and the orders (and their lines) of a buying word.
 */
const actedOn = (graph: Graph, question: string, questionWords: ReadonlyArray<string>): Set<ConnectorRuntime.Table> => {
  const named = (word: string) => graph.tables.filter((t) => stem(shortName(t.name)) === stem(word))
  const q = question.toLowerCase()
  return new Set([
    ...questionWords.filter((w) => /ed$/.test(w)).flatMap(named),
    ...[...q.matchAll(owned)].flatMap((match) => named(match[1]!)),
    // The orders, then their lines (the tables with a key to them): products are bought in lines.
    ...(buyingWords.test(q)
      ? named("orders").flatMap((orders) => [
        orders,
        ...graph.tables.filter((t) => t.columns.some((c) => c.references?.table === orders.name))
      ])
      : [])
  ])
}

/** Plans a query for a question over the connectors, or says why it cannot. */
export const plan = (
  text: string,
  connectors: ReadonlyArray<SchemaPrompt.ConnectorSchema>,
  now: Date,
  glossary: Glossary = {},
  lookedUp: ReadonlyArray<LookedUp> = []
): Plan | Unplannable => {
  // "Which of the regions", "the top 5 of our products": what is ranked follows the ranking word.
  const question = text.replace(/\b(which|what|top(?: \d+)?|bottom(?: \d+)?) of (?:the |our |all )?/gi, "$1 ")
  const questionWords = contentWords(question)
  const asked = new Set(questionWords.map(stem))
  const said = saidOf(question)
  if (connectors.length === 0) return { unplannable: "no data connector is enabled in this chat" }
  // The connector whose tables the question names best.
  const scored = connectors.map((connector) => ({
    connector,
    score: connector.schema.tables.reduce((sum, t) => sum + tableScore(t, asked, said), 0)
  }))
  scored.sort((a, b) => b.score - a.score)
  const connector = scored[0]!.connector
  const graph: Graph = {
    tables: connector.schema.tables,
    byName: new Map(connector.schema.tables.map((t) => [t.name, t]))
  }
  // Two years named ("2024 vs 2025") are compared as a series of years.
  const years = Periods.yearsOf(question)
  const read = years ?? Periods.windowOf(question, now)
  const inData = lookedUp.flatMap((name) => name.found).filter((name) => graph.byName.has(name.table))
  // A name of two kinds of rows ("Jordan", a customer and a product) would keep to both at once.
  const twoKinds = lookedUp.find((name) => new Set(name.found.map((row) => row.table)).size > 1)
  if (twoKinds !== undefined) {
    const kinds = [...new Set(twoKinds.found.map((row) => stem(shortName(row.table))))]
    return { unplannable: `"${twoKinds.phrase}" is the name of ${kinds.map(article).join(" and of ")}: say which` }
  }
  const refusal = refusalOf(
    question,
    graph,
    glossary,
    read !== undefined && "unreadable" in read ? read : undefined,
    inData
  )
  const dialect = connector.schema.dialect
  const q = (identifier: string) => dialect === "mysql" ? `\`${identifier.replace(/`/g, "``")}\`` : quote(identifier)
  const table = (name: string) => dialect === "mysql" ? name.split(".").map(q).join(".") : qualified(name)
  if (typeof refusal === "object") return lookUpName(refusal.unknownName, graph, lookedUp, connector.id, q, table)
  if (refusal !== undefined) return { unplannable: refusal }
  // An unreadable period was refused above.
  const window = read !== undefined && "unreadable" in read ? undefined : read

  const askedFor = aggregateOf(question)
  // "Revenue per order", "how many items per order": a breakdown by rows that have no name lists
  // thousands of keys; the average per row is asked. A total ("total revenue per order") or a
  // ranking ("the top 5 orders") keeps to the rows.
  const keyedPer = askedFor !== "avg" && limitOf(question) === undefined && !/\b(?:total|sum)\b/i.test(question)
    ? keyedPerOf(graph, question)
    : undefined
  let aggregate = keyedPer === undefined ? askedFor : "avg"
  // "What categories do we sell?", "which products does the shop sell": the things sold are listed;
  // "sell" is no measure there, as it is in "how many laptops did we sell" or "what sells best".
  const sellsWhat = /^\s*(?:what|which)\b[^?]*\b(?:do|does) (?:we|you|they|i|the [a-z]+) sell\b/i.test(question) &&
    limitOf(question) === undefined
  const measure = aggregate === "count"
    ? undefined
    : measureOf(graph, sellsWhat ? questionWords.filter((w) => !soldWords.has(w)) : questionWords, glossary)
  // An average per a table's row ("average revenue per customer", "average order value") is the
  // measure's total over the number of those rows, not the average of the measure's own rows; with
  // no measure ("average number of items per order"), the number of the rows counted over them.
  const per = aggregate === "avg" && (measure === undefined || !intensive.test(measure.column.name))
    ? keyedPer === undefined ? perOf(graph, question) : { table: keyedPer }
    : undefined
  const countsPer = measure === undefined && per !== undefined && per.asValue === undefined
  // A measure that does not add up (a price, a rate) is averaged unless a total is asked for, which
  // means nothing: "total discount" summed the rates of the order lines.
  const perRow = measure !== undefined && intensive.test(measure.column.name)
  if (perRow && aggregate === "sum") {
    return {
      unplannable:
        `${measure.column.name} is a rate or a price per row, so its total means nothing: ask for its average`
    }
  }
  if (aggregate === undefined) aggregate = measure === undefined ? "count" : perRow ? "avg" : "sum"
  if (aggregate !== "count" && measure === undefined && !countsPer) {
    return { unplannable: "I found no numeric column that matches the question" }
  }
  const perTable = per !== undefined && (countsPer || per.table !== measure!.table) ? per : undefined
  const found = groupsOf(graph, question)
  // The names found in the data ("Helix Mini") are kept to as a comment's listed values are.
  const filters = [
    ...filtersOf(graph, question),
    ...flagsOf(graph, question),
    ...foundFilters(graph, inData)
  ]
  // "Per" a table is no group of it: an average over it, or of its own rows. Values compared ("web
  // vs store revenue", "compare Europe and Asia Pacific", "the split between consumer and business")
  // are set side by side, not summed.
  const compared = /\b(?:vs\.?|versus|compare|compared|against|split|between|breakdown)\b/i.test(question)
    ? filters.filter((filter) => filter.values.length > 1).map(({ column, table }) => ({
      table,
      column,
      byColumn: true
    }))
    : []
  let groups = [...found.groups, ...compared].filter((g, i, all) =>
    (g.byColumn || g.table !== per?.table) &&
    all.findIndex((other) => other.table === g.table && other.column === g.column) === i
  )
  // "When was our last order?": the time of the latest (or the earliest) row, not their number.
  const when = /\bwhen (?:was|were|is|are|did|do|does|has|have)\b/i.test(question) ? extremeOf(question) : undefined
  if (/\bwhen (?:was|were|is|are|did|do|does|has|have)\b/i.test(question) && when === undefined) {
    return {
      unplannable: "I can say when the first or the last of something was; for when something peaked, ask which " +
        "month or day had the most, for example \"which month had the highest revenue\""
    }
  }
  // "The most recent order" is no ranking when its time is asked.
  const limit = when === undefined ? limitOf(question) : undefined
  // A ranking of periods ("which month had the highest revenue") is a series, ranked.
  const rankedGrain = limit === undefined ? undefined : rankedGrainOf(question)
  // "The average monthly price" names a column (monthly_price), not a monthly series.
  const grainText = graph.tables.flatMap((t) => t.columns).map((c) => c.name).filter((name) => name.includes("_"))
    .reduce((text, name) => text.replaceAll(name.replaceAll("_", " "), name), question.toLowerCase())
  const grain = Periods.grainOf(grainText) ?? rankedGrain ?? found.grain ?? (years === undefined ? undefined : "year")
  if (groups.length + (grain === undefined ? 0 : 1) > 2) {
    return { unplannable: "I can break a result down by two things at most (a period counts as one)" }
  }

  // What is counted or listed: the table the question names best (orders, customers), else the
  // group's; of two named as well, not the one whose value it names ("products in the Laptops
  // category" are products), nor the one whose column it is broken down by ("orders by customer
  // segment" are orders).
  const filterTables = new Set([...filters.map((filter) => filter.table), ...groups.map((g) => g.table)])
  const candidates = aggregate === "count" || countsPer
    ? [...graph.tables].map((t) => ({ t, s: tableScore(t, asked, said) })).filter((x) =>
      x.s > 0 && groups.every((g) => g.byColumn || x.t !== g.table) && x.t !== perTable?.table
    ).sort((a, b) => b.s - a.s || Number(filterTables.has(a.t)) - Number(filterTables.has(b.t)))
    : []
  // "How many orders were returned": a table a past tense names (returns) and one the question
  // names as well (orders) count the orders that have a return, along the returns' keys. So do a
  // table that the counted rows have or placed ("customers who placed orders", "orders with
  // returns"), and the orders of a buying word ("customers who bought").
  const verbs = actedOn(graph, question, questionWords)
  const noun = candidates.find((x) => !verbs.has(x.t))
  // The first that reaches the counted rows along many-to-one keys; a table named first.
  const verb = noun === undefined ? undefined : [
    ...candidates.filter((x) => verbs.has(x.t)),
    ...[...verbs].filter((t) => candidates.every((x) => x.t !== t)).map((t) => ({ t, s: 0 }))
  ].find((x) => search(graph, x.t.name, noun.t.name, true) !== undefined)
  let having = verb !== undefined && noun !== undefined && noun.s >= verb.s
    ? { table: noun.t, through: verb.t }
    : undefined
  // "Cancelled or returned", "web or Europe": either of two conditions, which keeping to each would
  // answer as both. Two values of one column ("shipped or cancelled", in Europe) are either already,
  // and are what an "or" joins then.
  const conditions = new Set(filters.map((filter) => `${filter.table.name}.${filter.column.name}`)).size +
    (having === undefined ? 0 : 1)
  if (conditions > 1 && /\bor\b/i.test(question) && filters.every((filter) => filter.values.length < 2)) {
    return {
      unplannable: "I keep to every condition a question names, so I cannot answer for one or another: ask for each"
    }
  }
  // "The most returned product" ranks the products by their returns.
  const rankedBy = having === undefined || limit === undefined || groups.length > 0
    ? undefined
    : labelColumnOf(having.table)
  const through = having?.through
  if (having !== undefined && rankedBy !== undefined) {
    groups = [{ table: having.table, column: rankedBy, byColumn: false }]
    having = undefined
  }
  const counted = through ?? candidates[0]?.t ?? groups[0]?.table
  const base = measure?.table ?? counted
  if (base === undefined) return { unplannable: "I could not tell which table the question is about" }
  // Counting a table's rows by those same rows ("our biggest customer" with no measure) is one each;
  // a measure of their own ("the most expensive products") ranks them by it.
  const own = groups.find((g) => !g.byColumn && g.table === base)
  if (own !== undefined && measure === undefined) {
    const name = shortName(own.table.name)
    return {
      unplannable:
        `I could not tell what to rank or count ${name} by: name a measure, for example "top ${name} by revenue"`
    }
  }
  // A question that asks for rows, not a number: "list the categories", "which products are in …".
  const listing = askedFor === undefined && measure === undefined && limit === undefined &&
    grain === undefined && groups.length === 0 && /^\s*(?:list|show|give|name|what|which|who)\b/i.test(question)

  const aliases = new Map<string, string>([[base.name, "t0"]])
  const joins: Array<string> = []
  let fansOut = false
  const join = (target: string): string | undefined => {
    if (aliases.has(target)) return aliases.get(target)
    const route = path(graph, base.name, target)
    if (route === undefined) return undefined
    for (const edge of route) {
      if (aliases.has(edge.to)) continue
      const alias = `t${aliases.size}`
      aliases.set(edge.to, alias)
      if (!isForward(graph, edge)) fansOut = true
      joins.push(
        `JOIN ${table(edge.to)} AS ${alias} ON ${alias}.${q(edge.toColumn)} = ${aliases.get(edge.from)}.${
          q(edge.fromColumn)
        }`
      )
    }
    return aliases.get(target)
  }
  const unjoinable = (target: ConnectorRuntime.Table) => ({
    unplannable: `I found no way to join ${shortName(base.name)} to ${shortName(target.name)}`
  })

  const needsTime = window !== undefined || grain !== undefined || when !== undefined
  const time = needsTime ? timeColumnNear(graph, base.name, asked) : undefined
  if (needsTime && time === undefined) return { unplannable: "I found no date or time column to filter or group by" }
  const timeAlias = time === undefined ? undefined : join(time.table.name)
  // Each group as a select-list expression and the result column it is named by.
  const dimensions: Array<
    { readonly expression: string; readonly name: string; readonly key?: string; readonly bucket?: true }
  > = []
  for (const group of groups) {
    const alias = join(group.table.name)
    if (alias === undefined) return unjoinable(group.table)
    // A table's rows are grouped by their key too: two customers of the same name are two rows.
    const key = group.byColumn ? undefined : group.table.columns.find((c) => c.primaryKey)
    const column = `${alias}.${q(group.column.name)}`
    dimensions.push({
      // A number that names a row (an order's key) is a name, not an amount to write as "19,316".
      expression: group.column.primaryKey && numericType.test(group.column.type)
        ? dialect === "mysql" ? `CAST(${column} AS CHAR)` : `${column}::text`
        : column,
      name: labelOf(group.table, group.column),
      ...(key === undefined ? {} : { key: `${alias}.${q(key.name)}` })
    })
  }
  const perAlias = perTable === undefined ? undefined : join(perTable.table.name)
  if (perTable !== undefined && perAlias === undefined) return unjoinable(perTable.table)
  const kept: Array<string> = []
  for (const filter of filters) {
    const alias = join(filter.table.name)
    if (alias === undefined) return unjoinable(filter.table)
    // A yes-or-no column is kept to TRUE or FALSE, which both dialects read.
    const literals = booleanType.test(filter.column.type)
      ? filter.values.map((v) => v.toUpperCase())
      : filter.values.map(literal)
    kept.push(
      `${alias}.${q(filter.column.name)} ${literals.length === 1 ? `= ${literals[0]}` : `IN (${literals.join(", ")})`}`
    )
  }

  // The measure as the question says it: the column's own words when it names them all ("unit
  // price"), else the word that stands for it ("revenue" for line_total), else the column's name.
  const measureWords = aggregate === "count" || countsPer
    ? having === undefined ? spoken(base) : `${spoken(having.table)} with ${spoken(base)}`
    // Not a column called "total" that "the total revenue" names: "the total total".
    : words(measure!.column.name).every((w) => asked.has(stem(w))) &&
        !words(measure!.column.name).every((w) => aggregateWords.has(w))
    ? words(measure!.column.name).join(" ")
    : ((word) =>
      word === undefined || priceWords.has(word)
        ? words(measure!.column.name).join(" ")
        : soldWords.has(word)
        ? "units sold"
        : word)(
        questionWords.find((w) => synonymsOf(w, glossary).length > 0 || synonymsOf(stem(w), glossary).length > 0)
      )
  const measureLabel = perTable === undefined
    ? measureWords
    : perTable.asValue !== undefined
    ? `${stem(shortName(perTable.table.name))} ${perTable.asValue}`
    : `${measureWords} per ${stem(shortName(perTable.table.name))}`
  const valueColumn = aggregate === "count"
    ? `${measureLabel.replace(/[^a-z0-9_]/gi, "_")}_count`
    : `${aggregate === "avg" ? "average_" : "total_"}${measureLabel.replace(/[^a-z0-9_]/gi, "_")}`
  if (fansOut && aggregate !== "count") {
    return {
      unplannable: `joining ${shortName(base.name)} to what the question names would count its rows more than once`
    }
  }
  const key = base.columns.find((c) => c.primaryKey)
  const perKey = perTable?.table.columns.find((c) => c.primaryKey)
  if (perTable !== undefined && perKey === undefined) {
    return { unplannable: `${shortName(perTable.table.name)} has no primary key to count its rows by` }
  }
  const round = dialect === "mysql" ? "ROUND" : "round"
  const numeric = (expression: string) => dialect === "mysql" ? expression : `(${expression})::numeric`
  // Across a one-to-many join, count the base rows once each.
  const havingAlias = having === undefined ? undefined : join(having.table.name)
  const havingKey = having?.table.columns.find((c) => c.primaryKey)
  const value = aggregate === "count"
    ? havingAlias !== undefined && havingKey !== undefined
      ? `count(DISTINCT ${havingAlias}.${q(havingKey.name)})`
      : fansOut && key !== undefined
      ? `count(DISTINCT t0.${q(key.name)})`
      : "count(*)"
    : perAlias !== undefined && perKey !== undefined
    ? `${numeric(countsPer ? "count(*)" : `sum(t0.${q(measure!.column.name)})`)} / nullif(count(DISTINCT ${perAlias}.${
      q(perKey.name)
    }), 0)`
    : numeric(`${aggregate}(t0.${q(measure!.column.name)})`)
  // Amounts to the cent; an average below one (a discount, a rate) to four places, so that it says
  // more than 0.03.
  const rounded = aggregate === "count"
    ? value
    : aggregate === "avg"
    ? `${round}(${value}, CASE WHEN abs(${value}) < 1 THEN 4 ELSE 2 END)`
    : `${round}(${value}, 2)`

  // A table the question names that the query neither joins nor could (each row of what is counted
  // or summed has one of it): "revenue from returns" was the revenue of everything.
  const ignored = graph.tables.find((t) =>
    tableScore(t, asked, said) >= 10 && !aliases.has(t.name) && search(graph, base.name, t.name, true) === undefined
  )
  if (ignored !== undefined) {
    return {
      unplannable:
        `I could not tell what ${shortName(ignored.name).replace(/_/g, " ")} have to do with the ${measureWords}` +
        ` asked for: name a measure, and what to break it down by or keep it to`
    }
  }

  const where = [
    ...(window === undefined || time === undefined ? [] : [
      ...(window.from === undefined ? [] : [`${timeAlias}.${q(time.column.name)} >= '${window.from}'`]),
      ...(window.to === undefined ? [] : [`${timeAlias}.${q(time.column.name)} < '${window.to}'`])
    ]),
    ...kept
  ]
  const filtered = filters.length === 0
    ? {}
    : { filters: filters.map((filter) => ({ column: labelOf(filter.table, filter.column), values: filter.values })) }
  const from = `FROM ${table(base.name)} AS t0${joins.length === 0 ? "" : `\n${joins.join("\n")}`}${
    where.length === 0 ? "" : `\nWHERE ${where.join(" AND ")}`
  }`
  const span = window === undefined || time === undefined ? undefined : {
    sql:
      `SELECT CAST(min(${q(time.column.name)}) AS DATE) AS earliest, CAST(max(${
        q(time.column.name)
      }) AS DATE) AS latest\n` +
      `FROM ${table(time.table.name)}`,
    of: shortName(time.table.name).replace(/_/g, " "),
    from: window.from,
    to: window.to
  }
  const common = {
    connectorId: connector.id,
    aggregate,
    valueColumn,
    measureLabel,
    period: window?.label,
    ...filtered,
    ...(span === undefined ? {} : { span })
  }

  const direction = fromTheLeast.test(question.toLowerCase()) ? "ASC" : "DESC"
  if (grain !== undefined && time !== undefined) {
    const at = `${timeAlias}.${q(time.column.name)}`
    // Each period as the date it starts on; weeks start on Monday, as PostgreSQL's do.
    const bucket = dialect === "mysql"
      ? grain === "week"
        ? `DATE_FORMAT(DATE(${at}) - INTERVAL WEEKDAY(${at}) DAY, '%Y-%m-%d')`
        : grain === "quarter"
        ? `DATE_FORMAT(MAKEDATE(YEAR(${at}), 1) + INTERVAL QUARTER(${at}) - 1 QUARTER, '%Y-%m-%d')`
        : `DATE_FORMAT(${at}, '${grain === "year" ? "%Y-01-01" : grain === "day" ? "%Y-%m-%d" : "%Y-%m-01"}')`
      : `date_trunc('${grain}', ${at})::date`
    dimensions.unshift({ expression: bucket, name: grain, bucket: true })
  }
  const [first, split] = dimensions
  // A period by its position in the select list (its expression is long), unless it moves.
  const groupBy = (byPosition: boolean) =>
    dimensions.flatMap((d, i) =>
      d.bucket === true && byPosition ? [String(i + 1)] : d.key === undefined ? [d.expression] : [d.key, d.expression]
    ).join(", ")
  if (when !== undefined && time !== undefined) {
    if (first !== undefined) {
      return { unplannable: "I can say when the first or the last of something was, not for each of a group" }
    }
    const of = stem(shortName(time.table.name)).replace(/_/g, " ")
    const name = `${when === "max" ? "last" : "first"}_${of.replace(/ /g, "_")}_at`
    return {
      ...common,
      sql: `SELECT ${when}(${timeAlias}.${q(time.column.name)}) AS ${q(name)}\n${from}`,
      shape: "when",
      valueColumn: name,
      measureLabel: of
    }
  }
  if (first === undefined) {
    // "The smallest order value": a ranking with nothing to rank; answered, it was the total.
    if (limit !== undefined) {
      return {
        unplannable: "I could not tell what to rank: name it and a measure, for example \"top 5 products by revenue\""
      }
    }
    // "List the products in the Laptops category": their names, not their number.
    // What is listed: the rows counted, or those that have what they are counted through
    // ("which customers bought Helix Mini"), each once; two of one name stay two.
    const listed = having === undefined ? base : having.table
    const listedAlias = having === undefined ? "t0" : havingAlias
    const named = listing && listedAlias !== undefined ? namedColumnOf(listed) : undefined
    if (named !== undefined) {
      const name = labelOf(listed, named)
      const listedKey = having === undefined ? undefined : listed.columns.find((c) => c.primaryKey)
      const once = listedKey === undefined
        ? ""
        : `\nGROUP BY ${listedAlias}.${q(listedKey.name)}, ${listedAlias}.${q(named.name)}`
      return {
        ...common,
        sql: `SELECT ${listedAlias}.${q(named.name)} AS ${q(name)}\n${from}${once}\nORDER BY 1\nLIMIT ${listLimit}`,
        shape: "list",
        valueColumn: name,
        labelColumn: name
      }
    }
    return { ...common, sql: `SELECT ${rounded} AS ${q(valueColumn)}\n${from}`, shape: "total" }
  }
  const selected = `SELECT ${dimensions.map((d) => `${d.expression} AS ${q(d.name)}`).join(", ")}, ${rounded} AS ${
    q(valueColumn)
  }\n${from}\nGROUP BY ${groupBy(true)}`
  const valueAt = dimensions.length + 1
  const labels = dimensions.map((_, i) => i + 1).join(", ")
  const split_ = split === undefined ? {} : { splitColumn: split.name }
  // A series reads in time order, each period's groups side by side; a ranking or a breakdown from
  // its first (or last) value.
  const rankedPeriod = grain !== undefined && grain === rankedGrain
  if (grain !== undefined && (limit === undefined || (split === undefined && !rankedPeriod))) {
    return { ...common, ...split_, sql: `${selected}\nORDER BY ${labels}`, shape: "series", labelColumn: first.name }
  }
  if (limit !== undefined && split !== undefined) {
    // A ranking by two things ranks one within each value of the other: "the top 3 products per
    // region", "the top 5 products each month", "which month was best for each region".
    const [ranked, within] = grain !== undefined && !rankedPeriod ? [split, first] : [first, split]
    // With no number asked, what is ranked said in the singular keeps one a group ("the top product
    // in each category", "which month was best for each region"); in the plural, ten.
    const wordsSaid = words(question)
    const kept = askedLimitOf(question) ??
      (wordsSaid.includes(ranked.name) && !wordsSaid.includes(`${ranked.name}s`) ? 1 : limit)
    const partitioned = `SELECT ${within.expression} AS ${q(within.name)}, ${ranked.expression} AS ${
      q(ranked.name)
    }, ${rounded} AS ${q(valueColumn)},\n  row_number() OVER (PARTITION BY ${
      within.key ?? within.expression
    } ORDER BY ${rounded} ${direction}, ${ranked.expression}) AS ${q("rank")}\n${from}\nGROUP BY ${groupBy(false)}`
    return {
      ...common,
      sql: `SELECT ${q(within.name)}, ${q(ranked.name)}, ${
        q(valueColumn)
      }\nFROM (\n${partitioned}\n) AS ranked\nWHERE ${q("rank")} <= ${kept}\nORDER BY 1, 3 ${direction}, 2`,
      shape: "top",
      ascending: direction === "ASC",
      labelColumn: within.name,
      splitColumn: ranked.name,
      rankedPer: kept
    }
  }
  return {
    ...common,
    ...split_,
    sql: `${selected}\nORDER BY ${valueAt} ${direction}, ${labels}${limit === undefined ? "" : `\nLIMIT ${limit}`}`,
    shape: limit === undefined ? "group" : "top",
    ascending: direction === "ASC",
    labelColumn: first.name
  }
}
