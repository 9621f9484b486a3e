/**
 * Verified queries first: a question that asks what a verified query of a reviewed semantic model
 * asks (the same content words) is answered by that query, and the answer is trusted. Its number
 * parameters are filled from the question: a year from a year it names ("revenue by month in 2025"
 * for "revenue by month in a given year"), a count from a number ("top 5 products"), or one when
 * it asks for one of what the query lists ("our largest order" of "our largest orders"). Any other
 * parameter takes its default; a query with a parameter the question does not fill and that has no
 * default does not match: a value the question does not give is never guessed.
 *
 * @internal
 */
import type * as LanguageModel from "@sightline/core/LanguageModel"
import type * as SemanticModel from "@sightline/core/SemanticModel"
import * as SemanticPrompt from "@sightline/core/SemanticPrompt"

/** A verified query that answers a question, and where it lives. */
export interface Match {
  readonly connectorId: number
  readonly name: string
  readonly question: string
  readonly verifiedBy?: string | undefined
  readonly verifiedAt?: string | number | undefined
  /** Parameters filled from the question; the others take their defaults. */
  readonly params: Readonly<Record<string, number>>
}

const numberWords: Readonly<Record<string, number>> = {
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
  twelve: 12,
  fifteen: 15,
  twenty: 20
}

const rawWords = (text: string) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0)
const isYear = (word: string) => /^(?:19|20)\d{2}$/.test(word)

/**
 * The question's values for a verified query's parameters, and the words they took (which the
 * content words then leave out); undefined when a parameter without a default is not filled.
 */
const fill = (
  question: string,
  query: SemanticModel.VerifiedQuery
): { readonly params: Record<string, number>; readonly took: ReadonlySet<string> } | undefined => {
  const said = rawWords(question)
  const own = new Set(rawWords(query.question))
  const numbers = said.filter((w) => !own.has(w) && (/^\d+$/.test(w) || w in numberWords))
  const params: Record<string, number> = {}
  const took = new Set<string>()
  for (const parameter of query.parameters ?? []) {
    if (parameter.type !== "number" && parameter.type !== undefined) {
      if (parameter.default === undefined) return undefined
      continue
    }
    const year = /year/.test(parameter.name)
    const value = numbers.find((w) => year === isYear(w) && !took.has(w))
    if (value !== undefined) {
      params[parameter.name] = numberWords[value] ?? Number(value)
      took.add(value)
      // "In a given year": the words that stood for the value.
      took.add(parameter.name)
      continue
    }
    // "Our largest order" of "our largest orders": one of them.
    const singular = !year && [...own].some((w) => /[^s]s$/.test(w) && said.includes(w.slice(0, -1)))
    if (singular) {
      params[parameter.name] = 1
      continue
    }
    if (parameter.default === undefined) return undefined
  }
  return { params, took }
}

const sameWords = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((w) => b.has(w))

/** The verified query of the chat's reviewed models that asks what `question` asks, if exactly one does. */
export const match = (
  question: string,
  semantic: ReadonlyArray<LanguageModel.SemanticContext>
): Match | undefined => {
  if (SemanticPrompt.contentWords(question).size === 0) return undefined
  const found: Array<Match> = []
  for (const context of semantic) {
    if (!context.reviewed) continue
    for (const query of context.model.verified_queries ?? []) {
      const filled = fill(question, query)
      if (filled === undefined) continue
      const without = (text: string) =>
        new Set([...SemanticPrompt.contentWords(text)].filter((w) => !filled.took.has(w) && w !== "given"))
      if (!sameWords(without(question), without(query.question))) continue
      found.push({
        connectorId: context.connector_id,
        name: query.name,
        question: query.question,
        verifiedBy: query.verified_by,
        verifiedAt: query.verified_at,
        params: filled.params
      })
    }
  }
  return found.length === 1 ? found[0] : undefined
}

/** How the answer says it read the question. */
export const reading = (found: Match): string => {
  const by = found.verifiedBy === undefined ? "" : ` by ${found.verifiedBy}`
  const at = found.verifiedAt === undefined
    ? ""
    : ` on ${
      typeof found.verifiedAt === "number"
        ? new Date(found.verifiedAt * 1000).toISOString().slice(0, 10)
        : found.verifiedAt
    }`
  const params = Object.entries(found.params)
  const filled = params.length === 0 ? "" : `, with ${params.map(([name, value]) => `${name} ${value}`).join(" and ")}`
  return `I read this as the verified query **${found.name}**: "${found.question}"${filled} (checked${by}${at}).`
}
