/**
 * Verified queries first: a question that asks what a verified query of a reviewed semantic model
 * asks (the same content words) is answered by that query, and the answer is trusted. Only a query
 * whose parameters all have defaults matches: a value the question does not give is never guessed.
 *
 * @internal
 */
import type * as LanguageModel from "@sightline/core/LanguageModel"
import * as SemanticPrompt from "@sightline/core/SemanticPrompt"

/** A verified query that answers a question, and where it lives. */
export interface Match {
  readonly connectorId: number
  readonly name: string
  readonly question: string
  readonly verifiedBy?: string | undefined
  readonly verifiedAt?: string | number | undefined
}

const sameWords = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((w) => b.has(w))

/** The verified query of the chat's reviewed models that asks what `question` asks, if exactly one does. */
export const match = (
  question: string,
  semantic: ReadonlyArray<LanguageModel.SemanticContext>
): Match | undefined => {
  const asked = SemanticPrompt.contentWords(question)
  if (asked.size === 0) return undefined
  const found: Array<Match> = []
  for (const context of semantic) {
    if (!context.reviewed) continue
    for (const query of context.model.verified_queries ?? []) {
      if ((query.parameters ?? []).some((p) => p.default === undefined)) continue
      if (!sameWords(asked, SemanticPrompt.contentWords(query.question))) continue
      found.push({
        connectorId: context.connector_id,
        name: query.name,
        question: query.question,
        verifiedBy: query.verified_by,
        verifiedAt: query.verified_at
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
  return `I read this as the verified query **${found.name}**: "${found.question}" (checked${by}${at}).`
}
