/**
 * A semantic model as the agent's system prompt shows it: the parts that the question's words name
 * (metrics, dimensions with their values, time dimensions, named filters), ranked by how many of
 * its words match their names, synonyms and descriptions, within a budget; the names of the rest;
 * and the verified queries most like the question, offered first with their parameters.
 *
 * @since 0.1.0
 */
import type * as SemanticModel from "./SemanticModel.js"

/**
 * The most characters of model the prompt carries per connector.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBudget = 6_000

/**
 * The verified queries offered per question.
 *
 * @since 0.1.0
 * @category constants
 */
export const offeredQueries = 3

// Plural-insensitive: "sales" and "sale" are one word; short words ("us", "is") are left alone.
const words = (text: string): ReadonlyArray<string> =>
  text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 1).map((w) =>
    w.length <= 3 ? w : w.replace(/(ies)$/, "y").replace(/(ses|xes)$/, (m) => m.slice(0, -2)).replace(/s$/, "")
  )

// Words that carry no content of their own: a question means the same without them.
const functionWords: ReadonlySet<string> = new Set([
  "what",
  "which",
  "who",
  "the",
  "of",
  "in",
  "for",
  "and",
  "our",
  "we",
  "us",
  "is",
  "are",
  "was",
  "were",
  "do",
  "doe",
  "did",
  "to",
  "me",
  "a",
  "an",
  "show",
  "give",
  "tell",
  "please",
  "it",
  "there"
])

// Words too common in questions to say which part of a model they mean: the function words, and
// those that shape a query rather than name what it reads.
const common: ReadonlySet<string> = new Set([
  ...functionWords,
  "how",
  "by",
  "per",
  "or",
  "list",
  "much",
  "many",
  "most",
  "top",
  "each",
  "last",
  "this",
  "year",
  "month"
])

/**
 * The words of a text that say what it asks (plural-insensitive, without function words): two
 * questions with the same content words ask the same thing.
 *
 * @since 0.1.0
 * @category utils
 */
export const contentWords = (text: string): ReadonlySet<string> =>
  new Set(words(text).filter((w) => !functionWords.has(w)))

/**
 * How many of the question's words `text` holds (each counted once).
 *
 * @since 0.1.0
 * @category utils
 */
export const likeness = (question: string, text: string): number => {
  const asked = new Set(words(question).filter((w) => !common.has(w)))
  const held = new Set(words(text))
  let score = 0
  for (const word of asked) if (held.has(word)) score += 1
  return score
}

interface Item {
  readonly section: "Metrics" | "Dimensions" | "Time dimensions" | "Named filters (segments)"
  readonly name: string
  readonly line: string
  readonly score: number
  readonly order: number
}

const listOf = (values: ReadonlyArray<string> | undefined) => (values ?? []).join(", ")

const items = (model: SemanticModel.SemanticModel, question: string): ReadonlyArray<Item> => {
  const out: Array<Item> = []
  const add = (section: Item["section"], name: string, line: string, text: string) =>
    out.push({
      section,
      name,
      line,
      score: likeness(question, `${name.replaceAll("_", " ")} ${text}`),
      order: out.length
    })
  for (const measure of model.measures) {
    const about = [
      measure.description,
      measure.synonyms === undefined ? undefined : `also: ${listOf(measure.synonyms)}`,
      measure.format === undefined
        ? undefined
        : measure.unit === undefined
        ? measure.format
        : `${measure.format} ${measure.unit}`,
      measure.unfiltered === undefined
        ? undefined
        : `by or filtered on what its filters constrain, use ${measure.unfiltered}`
    ].filter((part) => part !== undefined).join("; ")
    add("Metrics", measure.name, `- ${measure.name}: ${about || `${measure.agg} of ${measure.expr ?? "rows"}`}`, about)
  }
  for (const metric of model.metrics) {
    const about = [metric.description, metric.synonyms === undefined ? undefined : `also: ${listOf(metric.synonyms)}`]
      .filter((part) => part !== undefined).join("; ")
    add("Metrics", metric.name, `- ${metric.name} (${metric.type.replaceAll("_", " ")}): ${about}`, about)
  }
  for (const table of model.tables) {
    for (const dimension of table.dimensions ?? []) {
      const values = dimension.values?.map((v) =>
        v.synonyms === undefined || v.synonyms.length === 0 ? String(v.value) : `${v.value} (${listOf(v.synonyms)})`
      ).join(", ") ?? dimension.sample_values?.map(String).join(", ")
      const about = [
        dimension.description,
        dimension.synonyms === undefined ? undefined : `also: ${listOf(dimension.synonyms)}`,
        values === undefined
          ? undefined
          : `${dimension.values === undefined && dimension.is_enum !== true ? "e.g. " : "values: "}${values}`
      ].filter((part) =>
        part !== undefined
      ).join("; ")
      add("Dimensions", dimension.name, `- ${table.name}.${dimension.name}: ${about}`, about)
    }
    for (const time of table.time_dimensions ?? []) {
      const about = [time.description, time.synonyms === undefined ? undefined : `also: ${listOf(time.synonyms)}`]
        .filter((part) => part !== undefined).join("; ")
      add("Time dimensions", time.name, `- ${table.name}.${time.name}: ${about}`, about)
    }
    for (const filter of table.filters ?? []) {
      const about = [filter.description, filter.synonyms === undefined ? undefined : `also: ${listOf(filter.synonyms)}`]
        .filter((part) => part !== undefined).join("; ")
      add("Named filters (segments)", filter.name, `- ${filter.name}: ${about}`, about)
    }
  }
  return out
}

/**
 * The verified queries most like the question (any likeness at all), best first.
 *
 * @since 0.1.0
 * @category utils
 */
export const likelyQueries = (
  model: SemanticModel.SemanticModel,
  question: string,
  limit: number = offeredQueries
): ReadonlyArray<SemanticModel.VerifiedQuery> =>
  model.verifiedQueries
    .map((query, order) => ({
      query,
      order,
      score: likeness(question, `${query.name.replaceAll("_", " ")} ${query.question}`)
    }))
    .filter((scored) => scored.score > 0)
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, limit)
    .map((scored) => scored.query)

const parametersOf = (query: SemanticModel.VerifiedQuery): string =>
  (query.parameters ?? []).length === 0
    ? "no parameters"
    : `parameters: ${
      (query.parameters ?? []).map((p) =>
        `${p.name}${p.type === undefined ? "" : ` (${p.type})`}${
          p.description === undefined ? "" : `: ${p.description}`
        }${p.default === undefined ? "" : `, default ${p.default}`}`
      ).join("; ")
    }`

/**
 * The prompt section of one connector's model.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (options: {
  readonly connectorId: number
  readonly model: SemanticModel.SemanticModel
  readonly source: string
  readonly question: string
  readonly budget?: number | undefined
}): string => {
  const { model, question } = options
  const lines = [
    `### Semantic model ${model.file.name} of connector ${options.connectorId} (${options.source})`
  ]
  const instructions = model.file.module_custom_instructions?.sql_generation ?? model.file.custom_instructions
  if (instructions !== undefined) lines.push(`Instructions: ${instructions.replace(/\s+/g, " ").trim()}`)
  const offered = likelyQueries(model, question)
  if (offered.length > 0) {
    lines.push("Verified queries like this question (run_verified_query; prefer one that answers it):")
    for (const query of offered) lines.push(`- ${query.name}: "${query.question}" (${parametersOf(query)})`)
  }
  // The named parts first, then the rest in the model's order, while the budget lasts.
  const ranked = [...items(model, question)].sort((a, b) =>
    (b.score > 0 ? 1 : 0) - (a.score > 0 ? 1 : 0) || b.score - a.score || a.order - b.order
  )
  let budget = options.budget ?? defaultBudget
  const shown: Array<Item> = []
  const unshown: Array<Item> = []
  for (const item of ranked) {
    if (item.line.length <= budget) {
      shown.push(item)
      budget -= item.line.length
    } else {
      unshown.push(item)
    }
  }
  for (const section of ["Metrics", "Dimensions", "Time dimensions", "Named filters (segments)"] as const) {
    const here = shown.filter((item) => item.section === section).sort((a, b) => a.order - b.order)
    if (here.length > 0) lines.push(`${section}:`, ...here.map((item) => item.line))
  }
  if (unshown.length > 0) lines.push(`Also in the model: ${unshown.map((item) => item.name).join(", ")}`)
  return lines.join("\n")
}
