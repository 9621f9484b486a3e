/**
 * The offline model's vocabulary: every word a question may use for a part of a semantic model,
 * taken from the model itself (names, synonyms, listed values and their synonyms, sample values,
 * tables) and from a short list of general business words ("turnover", "buyers", "rev"), which
 * only ever point at what the model names. A new word is taught by a synonym in the model, not
 * here.
 *
 * Words are compared by their stems (`stem`: plural-insensitive, lower case), and a misspelt word
 * is corrected only towards a word the vocabulary knows (`correct`).
 *
 * @internal
 */
import { textType } from "@sightline/core/DerivedModel"
import type * as SemanticModel from "@sightline/core/SemanticModel"

/** What a phrase of a question can name. */
export type Target =
  | { readonly kind: "metric"; readonly name: string; readonly table?: string | undefined }
  | { readonly kind: "dimension"; readonly name: string }
  | { readonly kind: "value"; readonly dimension: string; readonly value: string | number | boolean }
  | { readonly kind: "segment"; readonly name: string }
  | { readonly kind: "time"; readonly name: string }
  /** A period the model names ("back to school"): its days, read by the period phase. */
  | { readonly kind: "period"; readonly name: string; readonly period: SemanticModel.NamedPeriod }
  /** A custom granularity ("fiscal year"): what a series is grouped by, read by the period phase. */
  | { readonly kind: "grain"; readonly name: string }

/** A phrase (as stems) and what it names. */
export interface Term {
  readonly stems: ReadonlyArray<string>
  readonly target: Target
  /** The model's name or synonym it came from. */
  readonly said: string
}

export interface Vocabulary {
  /** Terms by their stems joined with spaces. */
  readonly terms: ReadonlyMap<string, ReadonlyArray<Term>>
  /** The longest term, in words. */
  readonly longest: number
  /** Every stem of every term but the periods': what a misspelt word may be corrected to. */
  readonly known: ReadonlySet<string>
  /** The names of the model's measures and derived metrics, as a decline offers them. */
  readonly metrics: ReadonlyArray<string>
  /** For each dimension (as a query names it), the dimension of its table whose values are unique, if any. */
  readonly identifiers: ReadonlyMap<string, string>
  /**
   * The dimensions whose values the model does not list (names of products, customers), where a
   * word the model does not know may be a value: the offline model looks it up in them.
   */
  readonly searchable: ReadonlyArray<string>
  /**
   * For each dimension (as a query names it), the dimension naming the rows of the table below it
   * that its values classify (category → product): what "the best selling laptop" ranks.
   */
  readonly members: ReadonlyMap<string, string>
  /** The metrics that are a share of the total of the rows shown (`type: share`). */
  readonly shares: ReadonlySet<string>
  /**
   * For each measure with filters, the dimensions its filters constrain ("orders": status, by
   * "cancelled orders excluded"), and the measure that counts what they leave out, if the model names one.
   */
  readonly constrained: ReadonlyMap<string, Constrained>
}

/** What a measure's own filters constrain. */
export interface Constrained {
  readonly dimensions: ReadonlyArray<string>
  /** The filters, in words ("cancelled orders excluded"). */
  readonly filters: ReadonlyArray<string>
  readonly unfiltered?: string | undefined
}

/** The most dimensions a word is looked up in. */
const searchLimit = 6

/** A word as the vocabulary compares it: lower case, singular ("sales" → "sale", "categories" → "category"). */
export const stem = (word: string): string => {
  const w = word.toLowerCase()
  if (w.length <= 3 || /(ss|us|is)$/.test(w)) return w
  if (/ies$/.test(w)) return `${w.slice(0, -3)}y`
  if (/(ches|shes|sses|xes)$/.test(w)) return w.slice(0, -2)
  return w.endsWith("s") ? w.slice(0, -1) : w
}

/** The words of a text, split at anything but letters, digits and `&`. */
export const wordsOf = (text: string): ReadonlyArray<string> =>
  text.replace(/_/g, " ").toLowerCase().split(/[^\p{L}\p{N}&]+/u).filter((w) => w.length > 0)

/**
 * General business words, in groups that point at words a model may use: a word of a group names
 * what the first of its meanings names in the model, if anything; it never adds a meaning of its own.
 */
export const generalWords: ReadonlyArray<
  { readonly words: ReadonlyArray<string>; readonly meanings: ReadonlyArray<string> }
> = [
  {
    words: ["revenue", "sales", "turnover", "income", "money", "dollars", "gross sales"],
    meanings: ["revenue", "sales"]
  },
  { words: ["buyers", "clients", "shoppers"], meanings: ["customers", "customer"] },
  { words: ["accounts"], meanings: ["customers", "customer", "accounts"] },
  { words: ["catalog", "catalogue", "goods", "items", "skus"], meanings: ["products", "product"] },
  { words: ["units", "quantity"], meanings: ["units", "quantity"] }
]

/** Short forms, read as their words before anything else. */
export const shortForms: ReadonlyMap<string, string> = new Map([
  ["rev", "revenue"],
  ["revs", "revenue"],
  ["qty", "quantity"],
  ["qtys", "quantity"],
  ["avg", "average"],
  ["amt", "amount"],
  ["cnt", "count"],
  ["yr", "year"],
  ["yrs", "years"],
  ["yoy", "year over year"],
  ["mom", "month over month"],
  ["qtr", "quarter"],
  ["qtrs", "quarters"],
  ["mo", "month"],
  ["mos", "months"],
  ["mth", "month"],
  ["wk", "week"],
  ["wks", "weeks"],
  ["num", "number"],
  ["no", "number"],
  ["nbr", "number"],
  ["cust", "customer"],
  ["custs", "customers"],
  ["prod", "product"],
  ["prods", "products"],
  ["cat", "category"],
  ["cats", "categories"],
  ["dept", "department"],
  ["biz", "business"],
  ["pct", "percent"],
  ["ytd", "year to date"],
  ["thru", "through"],
  ["whats", "what is"],
  ["hows", "how is"]
])

const add = (terms: Map<string, Array<Term>>, said: string, target: Target) => {
  const stems = wordsOf(said).map(stem)
  if (stems.length === 0) return
  const key = stems.join(" ")
  const list = terms.get(key) ?? []
  if (!list.some((t) => JSON.stringify(t.target) === JSON.stringify(target))) list.push({ stems, target, said })
  terms.set(key, list)
}

/**
 * The vocabulary of a model (its file, as the chat's semantic context carries it). A model derived
 * from a schema also names each table: "customers" counts its rows, and groups by its name column.
 */
export const of = (file: SemanticModel.SemanticModelFile, derived = false): Vocabulary => {
  const terms = new Map<string, Array<Term>>()
  const metrics: Array<string> = []
  // A dimension named in two tables is named `table.name`.
  const dimensionTables = new Map<string, number>()
  for (const table of file.tables) {
    for (const d of [...(table.dimensions ?? []), ...(table.time_dimensions ?? [])]) {
      dimensionTables.set(d.name, (dimensionTables.get(d.name) ?? 0) + 1)
    }
  }
  const qualified = (table: string, name: string) => (dimensionTables.get(name) ?? 0) > 1 ? `${table}.${name}` : name
  const identifiers = new Map<string, string>()
  const searchable: Array<string> = []
  for (const table of file.tables) {
    // A name that rows may share ("customer") is told apart by the table's unique dimension.
    const unique = (table.dimensions ?? []).find((d) => d.unique === true)
    for (const dimension of table.dimensions ?? []) {
      if (unique !== undefined && dimension !== unique && dimension.unique !== true && dimension.values === undefined) {
        identifiers.set(qualified(table.name, dimension.name), qualified(table.name, unique.name))
      }
    }
    for (const dimension of table.dimensions ?? []) {
      const name = qualified(table.name, dimension.name)
      if (
        dimension.values === undefined && dimension.unique !== true &&
        (dimension.data_type === undefined || textType.test(dimension.data_type))
      ) {
        searchable.push(name)
      }
      // "invoice status" where two tables have a status.
      for (const said of [dimension.name, `${table.name} ${dimension.name}`, ...(dimension.synonyms ?? [])]) {
        add(terms, said, { kind: "dimension", name })
      }
      for (const listed of dimension.values ?? []) {
        const target: Target = { kind: "value", dimension: name, value: listed.value }
        for (const said of [String(listed.value), ...(listed.synonyms ?? [])]) add(terms, said, target)
      }
      for (const sample of dimension.sample_values ?? []) {
        if (typeof sample === "string") add(terms, sample, { kind: "value", dimension: name, value: sample })
      }
    }
    for (const time of table.time_dimensions ?? []) {
      const name = qualified(table.name, time.name)
      // A derived model's "created_at" is said "created" ("accounts created in 2025").
      const bare = derived ? /^(.+)_(?:at|on|date)$/.exec(time.name)?.[1] : undefined
      for (const said of [time.name, ...(bare === undefined ? [] : [bare]), ...(time.synonyms ?? [])]) {
        add(terms, said, { kind: "time", name })
      }
    }
    for (const measure of table.measures ?? []) {
      metrics.push(measure.name)
      // "invoice amount": the table's name before its measure's.
      const qualifiedSaid = measure.name.includes(table.name) ? [] : [`${table.name} ${measure.name}`]
      for (const said of [measure.name, ...qualifiedSaid, ...(measure.synonyms ?? [])]) {
        add(terms, said, { kind: "metric", name: measure.name, table: table.name })
      }
    }
    for (const metric of table.metrics ?? []) {
      metrics.push(metric.name)
      for (const said of [metric.name, ...(metric.synonyms ?? [])]) {
        add(terms, said, { kind: "metric", name: metric.name, table: table.name })
      }
    }
    for (const filter of table.filters ?? []) {
      for (const said of [filter.name, ...(filter.synonyms ?? [])]) {
        add(terms, said, { kind: "segment", name: filter.name })
      }
    }
  }
  for (const metric of file.metrics ?? []) {
    metrics.push(metric.name)
    for (const said of [metric.name, ...(metric.synonyms ?? [])]) {
      add(terms, said, { kind: "metric", name: metric.name })
    }
  }
  if (derived) {
    for (const table of file.tables) {
      const count = (table.measures ?? []).find((m) => m.agg === "count" && m.expr === undefined)
      const label = (table.dimensions ?? []).find((d) => /^(name|title|label)$/.test(d.name))
      const said = table.name.replaceAll("_", " ")
      if (count !== undefined) add(terms, said, { kind: "metric", name: count.name, table: table.name })
      if (label !== undefined) add(terms, said, { kind: "dimension", name: qualified(table.name, label.name) })
    }
  }
  for (const period of file.periods ?? []) {
    for (const said of [period.name.replaceAll("_", " "), ...(period.synonyms ?? [])]) {
      add(terms, said, { kind: "period", name: period.name, period })
    }
  }
  for (const granularity of file.custom_granularities ?? []) {
    for (
      const said of [granularity.name.replaceAll("_", " "), granularity.label, ...(granularity.synonyms ?? [])]
    ) {
      if (said !== undefined) add(terms, said, { kind: "grain", name: granularity.name })
    }
  }
  // General words name what their first meaning names, where the model has not used them itself.
  for (const { meanings, words } of generalWords) {
    const meaning = meanings.map((m) => terms.get(wordsOf(m).map(stem).join(" "))).find((found) => found !== undefined)
    if (meaning === undefined) continue
    for (const said of words) {
      if (terms.has(wordsOf(said).map(stem).join(" "))) continue
      for (const term of meaning) add(terms, said, term.target)
    }
  }
  const members = new Map<string, string>()
  for (const relationship of file.relationships ?? []) {
    const below = file.tables.find((t) => t.name === relationship.left_table)
    const above = file.tables.find((t) => t.name === relationship.right_table)
    // The rows' own name: a dimension whose values the model does not list, and that is not a number.
    const name = (below?.dimensions ?? []).find((d) => d.unique !== true && d.values === undefined)
    if (below === undefined || above === undefined || name === undefined) continue
    for (const dimension of above.dimensions ?? []) {
      const key = qualified(above.name, dimension.name)
      if (!members.has(key)) members.set(key, qualified(below.name, name.name))
    }
  }
  const shares = new Set(
    [...file.tables.flatMap((t) => t.metrics ?? []), ...(file.metrics ?? [])].filter((m) =>
      "type" in m && m.type === "share"
    )
      .map((m) => m.name)
  )
  // A filter constrains a dimension of its table whose column it names ("status <> 'cancelled'").
  const constrained = new Map<string, Constrained>()
  for (const table of file.tables) {
    for (const measure of table.measures ?? []) {
      const dimensions = new Set<string>()
      const filters: Array<string> = []
      for (const name of measure.filters ?? []) {
        const owner = file.tables.find((t) => (t.filters ?? []).some((f) => f.name === name))
        const filter = owner?.filters?.find((f) => f.name === name)
        if (owner === undefined || filter === undefined) continue
        filters.push(filter.description ?? name.replaceAll("_", " "))
        for (const dimension of owner.dimensions ?? []) {
          const column = dimension.expr ?? dimension.name
          if (/^\w+$/.test(column) && new RegExp(`\\b${column}\\b`, "i").test(filter.expr)) {
            dimensions.add(qualified(owner.name, dimension.name))
          }
        }
      }
      if (dimensions.size > 0) {
        constrained.set(measure.name, { dimensions: [...dimensions], filters, unfiltered: measure.unfiltered })
      }
    }
  }
  return indexed(terms, {
    metrics,
    identifiers,
    members,
    shares,
    constrained,
    searchable: searchable.slice(0, searchLimit)
  })
}

const indexed = (
  terms: Map<string, Array<Term>>,
  rest: Pick<Vocabulary, "metrics" | "identifiers" | "members" | "shares" | "constrained" | "searchable">
): Vocabulary => {
  const known = new Set<string>()
  let longest = 1
  for (const list of terms.values()) {
    for (const term of list) {
      // A period's name is read as said: its small words ("back to school", "the holidays") would
      // otherwise count as words of the model, which words apart may not cross.
      if (term.target.kind !== "period") { for (const s of term.stems) known.add(s) }
      longest = Math.max(longest, term.stems.length)
    }
  }
  return { ...rest, terms, longest, known }
}

/**
 * The vocabulary with values found in the data ("Helix Mini" of product): each names itself, and
 * `also` names a value by a word of it that no other found value holds ("priya" for "Priya Okafor").
 */
export const withValues = (
  vocabulary: Vocabulary,
  values: ReadonlyArray<{ readonly dimension: string; readonly value: string; readonly also?: string | undefined }>
): Vocabulary => {
  const terms = new Map([...vocabulary.terms].map(([key, list]) => [key, [...list]]))
  for (const { also, dimension, value } of values) {
    const target: Target = { kind: "value", dimension, value }
    add(terms, value, target)
    if (also !== undefined) add(terms, also, target)
  }
  return indexed(terms, vocabulary)
}

// Optimal string alignment distance, capped: how many edits (a transposition is one) apart.
const distance = (a: string, b: string, cap: number): number => {
  if (Math.abs(a.length - b.length) > cap) return cap + 1
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => i + j))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1)
      }
      rows[i]![j] = best
    }
  }
  return rows[a.length]![b.length]!
}

/**
 * The known stem a misspelt word stands for: one edit away for words of five letters or more, two
 * for nine or more, and only when exactly one known word is that close. Short words are never
 * corrected: "rev" and "red" are both words.
 */
export const correct = (vocabulary: Vocabulary, word: string): string | undefined => {
  const near = nearest(vocabulary, word)
  return near.length === 1 ? near[0] : undefined
}

/**
 * The known words (stems) nearest to a word of five letters or more, by edit distance: one edit, or
 * two for a word of nine letters or more; none when none is that near. More than one is a tie, which
 * `correct` does not break: the reader asks which is meant.
 */
export const nearest = (vocabulary: Vocabulary, word: string): ReadonlyArray<string> => {
  if (word.length < 5 || /\d/.test(word)) return []
  const cap = word.length >= 9 ? 2 : 1
  let best = cap + 1
  let found: Array<string> = []
  for (const known of vocabulary.known) {
    if (known.length < 4) continue
    const d = distance(word, known, cap)
    if (d < best) {
      best = d
      found = [known]
    } else if (d === best) {
      found.push(known)
    }
  }
  return best <= cap ? found : []
}
