/**
 * Phase 1, the phrases: the model's phrases in the question, longest first. A misspelt word is read
 * as the known word it is one edit from, and a word a lookup found alone in one value ("priya" for
 * "Priya Okafor") as that value; both are said in the answer. Then the metrics named by words apart
 * ("orders were cancelled", "orders were placed").
 *
 * @internal
 */
import * as Vocabulary from "../vocabulary.js"
import { type Ambiguous, cover, isStop, type Match, type Phrased, type Question } from "./reading.js"
import * as References from "./references.js"
import * as Words from "./words.js"

/** The phrases of the model and the rows the question refers to, and the words they account for; or a decline. */
export const read = (question: Question): Phrased | Ambiguous => {
  const { foundValues, tokens, vocabulary } = question
  const references = References.find(question)
  if (isStop(references)) return references
  const matches: Array<Match> = []
  const corrections: Array<readonly [string, string]> = []
  // "The second one" as the value it picks out, said in the answer.
  const referred = new Set(references.flatMap(({ end, start }) => range(start, end)))
  for (const reference of references) corrections.push([reference.said, reference.value])
  for (let i = 0; i < tokens.length;) {
    const reference = references.find(({ start }) => start === i)
    if (reference !== undefined) {
      matches.push(...reference.matches)
      i = reference.end
      continue
    }
    if (referred.has(i)) {
      i++
      continue
    }
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
    if (!Words.fillers.has(token.stem) && !Words.periodish.has(token.stem)) {
      const corrected = Vocabulary.correct(vocabulary, token.stem)
      const terms = corrected === undefined ? undefined : vocabulary.terms.get(corrected)
      if (terms !== undefined) {
        corrections.push([token.word, terms[0]!.said])
        matches.push({ start: i, end: i + 1, terms })
      }
    }
    i++
  }
  const specific = namedApart(question)
  const covered = cover(
    question.covered,
    tokens.flatMap((token, i) =>
      matches.some((m) => i >= m.start && i < m.end) || specific.some((term) => term.stems.includes(token.stem))
        ? [i]
        : []
    )
  )
  return { ...question, matches, corrections, specific, covered, referred }
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i)

/**
 * The metrics named by words apart: the most specific metric whose name or synonym the question
 * holds, more than one word long, with at most three words between its words that carry nothing.
 */
const namedApart = ({ tokens, vocabulary }: Question): ReadonlyArray<Vocabulary.Term> => {
  const specific: Array<Vocabulary.Term> = []
  const apart = (term: Vocabulary.Term) => {
    const at = term.stems.map((s) => tokens.findIndex((t) => t.stem === s))
    if (at.some((i) => i < 0)) return false
    const [from, to] = [Math.min(...at), Math.max(...at)]
    const between = tokens.slice(from, to + 1).filter((t) => !term.stems.includes(t.stem))
    return between.length <= 3 && between.every((t) => Words.fillers.has(t.stem) && !vocabulary.known.has(t.stem))
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
  return specific
}
