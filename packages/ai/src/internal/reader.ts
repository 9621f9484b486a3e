/**
 * Reads a question into a semantic query (`SemanticQuery`) of one of the chat's semantic models,
 * or declines with the reason. The reading is data: the compiler the agent uses writes its SQL,
 * and the answer states it. Every word of the question is accounted for: it names a part of the
 * model (`vocabulary.ts`), a period (`periods.ts`), or the query's shape ("by", "top 5", "how
 * many"), or is a word that carries nothing ("the", "our"). Any other word declines the question,
 * naming it: a reading that skipped it would answer a broader question than the one asked.
 *
 * The reading goes in phases, one module each under `reader/`, threading one record
 * (`reader/reading.ts`): phrases → period → shape → roles → measure → query. Any phase may stop it
 * with a decline, or with words to look up in the data first. Instructions about the answer ("write
 * a short report with a chart") are taken out before any phase (`reader/directives.ts`).
 *
 * @internal
 */
import type * as LanguageModel from "@sightline/core/LanguageModel"
import * as Arr from "effect/Array"
import * as Option from "effect/Option"
import * as Both from "./reader/both.js"
import * as Change from "./reader/change.js"
import * as Directives from "./reader/directives.js"
import * as FollowUp from "./reader/followUp.js"
import * as Measure from "./reader/measure.js"
import * as Period from "./reader/period.js"
import * as Phrases from "./reader/phrases.js"
import * as Query from "./reader/query.js"
import {
  type Ambiguous,
  type Clarify,
  type Declined,
  type Found,
  isStop,
  type Lookup,
  type Prior,
  question,
  type Read,
  type Refused
} from "./reader/reading.js"
import * as Roles from "./reader/roles.js"
import * as Shape from "./reader/shape.js"
import * as Words from "./reader/words.js"
import * as Refusals from "./refusals.js"
import * as Vocabulary from "./vocabulary.js"

export type { Investigate } from "./reader/change.js"
export type { Clarify, Declined, Followed, Found, Lookup, Read, Search } from "./reader/reading.js"

/** The conversation before the question: its questions, and the answers that showed a table. */
export interface Conversation {
  /** The earlier questions, oldest first. */
  readonly questions: ReadonlyArray<string>
  readonly answers: ReadonlyArray<LanguageModel.EarlierAnswer>
}

/** The most earlier questions of a conversation read again for a follow-up. */
const remembered = 6

/**
 * Reads `question` against the chat's semantic models (the library's, or ones derived from a
 * schema), or declines; undefined when it has no model to read against. `previous` are the
 * conversation's earlier questions, oldest first: a question that follows on from the latest one
 * read is merged with its reading (`reader/followUp.ts`). They are read again, deterministically;
 * a lookup one of them needs is asked for first.
 */
export const read = (
  question: string,
  semantic: ReadonlyArray<LanguageModel.SemanticContext>,
  now: Date,
  found: ReadonlyArray<Found> = [],
  conversation: Conversation = { questions: [], answers: [] }
): Read | Declined | Lookup | Clarify | Change.Investigate | undefined => {
  const previous = conversation.questions
  const contexts = semantic
  if (contexts.length === 0) return undefined
  // "Why did revenue drop in March": where the change is, read from the rest of the question; a
  // rest that does not read is declined for its own reason ("median" picks out nothing).
  const change = Change.of(question)
  if (change !== undefined) {
    const rest = read(change.rest, semantic, now, found)
    if (rest !== undefined && ("lookup" in rest || "declined" in rest)) return rest
    if (rest !== undefined && "query" in rest) return Change.investigation(change, rest, semantic)
  }
  // "Customers who bought both laptops and phones": read as either, then kept to those with each.
  const each = Both.of(question)
  if (each !== undefined) {
    const rest = read(each.rest, semantic, now, found)
    if (rest !== undefined && ("lookup" in rest || "declined" in rest)) return rest
    if (rest !== undefined && "query" in rest) return Both.apply(each, rest, semantic)
  }
  const refusal = Refusals.of(question)
  if (refusal !== undefined) return { declined: refusal.reason }
  // The latest earlier question that was read: what this one may follow on from.
  let prior: Prior | undefined
  const earlier = previous.slice(-remembered)
  for (let i = earlier.length - 1; i >= 0 && prior === undefined; i--) {
    const before = read(earlier[i]!, semantic, now, found, { ...conversation, questions: earlier.slice(0, i) })
    if (before !== undefined && "lookup" in before) return before
    if (before !== undefined && "query" in before) {
      // The rows that answer showed, for "the second one".
      const shown = Arr.findLast(conversation.answers, (answer) => answer.question === earlier[i])
      prior = {
        question: earlier[i]!,
        read: before,
        ...Option.match(shown, { onNone: () => ({}), onSome: ({ columns, rows }) => ({ rows: { columns, rows } }) })
      }
    }
  }
  // "… Write a short report with a chart": how to present the answer, not what to answer.
  const { directives, question: asked } = Directives.split(question)
  const text = Words.normalize(asked)
  let best: { readonly result: Read | Declined | Lookup | Ambiguous; readonly unknown: number } | undefined
  for (const context of contexts) {
    const vocabulary = Vocabulary.of(context.model, !context.reviewed)
    const result = readWith(
      text,
      vocabulary,
      context.connector_id,
      now,
      found,
      prior?.read.connectorId === context.connector_id ? prior : undefined
    )
    const unknown = "unknown" in result ? result.unknown : 0
    if (best === undefined || unknown < best.unknown) {
      best = { result: "declined" in result ? result.declined : result, unknown }
    }
  }
  const result = "ambiguous" in best!.result
    ? clarify(best!.result, question, semantic, now, found, conversation)
    : best!.result
  // A reply to an answer that was not read ("and per channel?" after a decline) has nothing to follow.
  if ("declined" in result && prior === undefined && earlier.length > 0 && Words.followUpCue.test(text)) {
    return {
      declined: "it follows on from an earlier question that I could not read, so I cannot tell what it changes: " +
        "ask it in full"
    }
  }
  return directives.length > 0 && "query" in result ? { ...result, directives } : result
}

/**
 * A clarification of words that could mean several things: each option written into the question,
 * kept when the question then reads (or needs only a lookup of the name it now holds); a decline
 * when fewer than two do. No option is ever read on the asker's behalf.
 */
const clarify = (
  ambiguous: Ambiguous,
  question: string,
  semantic: ReadonlyArray<LanguageModel.SemanticContext>,
  now: Date,
  found: ReadonlyArray<Found>,
  conversation: Conversation
): Clarify | Declined => {
  const { declined, options, said } = ambiguous.ambiguous
  const choices: Array<{ readonly label: string; readonly question: string }> = []
  for (const option of options) {
    const rewritten = Words.replacePhrase(question, said, option.words) ??
      Words.replacePhrase(Words.normalize(question), said, option.words)
    if (rewritten === undefined || choices.some((choice) => choice.question === rewritten)) continue
    const reread = read(rewritten, semantic, now, found, conversation)
    if (reread !== undefined && ("query" in reread || "lookup" in reread)) {
      choices.push({ label: option.label, question: rewritten })
    }
  }
  return choices.length >= 2
    ? { clarify: { question: ambiguous.ambiguous.question, choices, declined } }
    : { declined }
}

/** Reads the normalized question against one model, or says why not (with how many words it could not place). */
const readWith = (
  text: string,
  modelVocabulary: Vocabulary.Vocabulary,
  connectorId: number,
  now: Date,
  allFound: ReadonlyArray<Found>,
  prior: Prior | undefined
): Read | Lookup | Refused | Ambiguous => {
  const phrased = Phrases.read(question(text, modelVocabulary, connectorId, now, allFound, prior))
  if (isStop(phrased)) return phrased
  const dated = Period.read(phrased)
  if (isStop(dated)) return dated
  const shaped = Shape.read(dated)
  if (isStop(shaped)) return shaped
  const roled = Roles.read(shaped)
  if (isStop(roled)) return roled
  const measured = Measure.read(FollowUp.follows(roled, prior) ? FollowUp.read(roled, prior) : roled)
  if (isStop(measured)) return measured
  return Query.read(measured)
}
