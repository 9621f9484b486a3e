/**
 * References to the rows of the answer before: "the second one", "the top product", "the last one",
 * and "it" or "that one" when that answer had one row. Each is read as the value of the row's first
 * dimension (with what tells rows of one name apart, when the answer showed it), and the answer says
 * which value it took. "It" after an answer of several rows picks out none of them: the reader asks
 * which (a reading that skipped it would answer for all of them).
 *
 * @internal
 */
import type * as Vocabulary from "../vocabulary.js"
import { type Ambiguous, ask, type Match, type Question } from "./reading.js"

const ordinals: ReadonlyMap<string, number> = new Map([
  ["first", 1],
  ["1st", 1],
  ["top", 1],
  ["second", 2],
  ["2nd", 2],
  ["third", 3],
  ["3rd", 3],
  ["fourth", 4],
  ["4th", 4],
  ["fifth", 5],
  ["5th", 5],
  ["last", -1],
  ["bottom", -1]
])

// The rows a clarification offers, as a reference says them.
const ordinalWords = ["first", "second", "third", "fourth", "fifth"]

/**
 * A reference found: the words it spans, as one match per value it picked (the row's name, and what
 * tells rows of one name apart), and the words said for the answer.
 */
export interface Reference {
  readonly start: number
  readonly end: number
  readonly matches: ReadonlyArray<Match>
  readonly said: string
  readonly value: string
}

/** The references of the question to the rows of the answer before; a decline for an "it" that picks out none. */
export const find = (question: Question): ReadonlyArray<Reference> | Ambiguous => {
  const prior = question.prior
  const table = prior?.rows
  const dimension = prior?.read.query.dimensions?.[0]
  if (prior === undefined || table === undefined || dimension === undefined) return []
  const column = table.columns.indexOf(dimension)
  if (column < 0 || table.rows.length === 0) return []
  const identifier = prior.read.identifiers?.find((d) => d !== dimension)
  const identifierColumn = identifier === undefined ? -1 : table.columns.indexOf(identifier)
  const { tokens, vocabulary } = question
  // The words that name the rows' dimension ("product", "products").
  const names = (i: number) =>
    tokens[i] !== undefined &&
    (vocabulary.terms.get(tokens[i]!.stem) ?? []).some((term: Vocabulary.Term) =>
      term.target.kind === "dimension" && term.target.name === dimension
    )
  const row = (n: number) => n === -1 ? table.rows.at(-1) : table.rows[n - 1]
  const references: Array<Reference> = []
  const refer = (start: number, end: number, picked: ReadonlyArray<unknown>) => {
    const value = String(picked[column])
    // The words' own stems: a reference is no part of a metric named by words apart.
    const stems = tokens.slice(start, end).map((t) => t.stem)
    const term = (target: Vocabulary.Target, said: string): Match => ({
      start,
      end,
      terms: [{ stems, said, target }]
    })
    const matches = [term({ kind: "value", dimension, value }, value)]
    if (identifierColumn >= 0) {
      const id = String(picked[identifierColumn])
      matches.push(term({ kind: "value", dimension: identifier!, value: id }, id))
    }
    references.push({
      start,
      end,
      matches,
      said: tokens.slice(start, end).map((t) => t.word).join(" "),
      value
    })
  }
  for (let i = 0; i < tokens.length; i++) {
    const word = tokens[i]!.word
    const n = ordinals.get(word)
    // "The second one", "the top product", "the 2nd".
    if (n !== undefined && (tokens[i + 1]?.word === "one" || names(i + 1))) {
      const picked = row(n)
      if (picked !== undefined) refer(i, i + 2, picked)
      i++
      continue
    }
    // "It", "that one", "this product": the one row of the answer before.
    const pronoun = word === "it" ||
      ((word === "that" || word === "this") && (tokens[i + 1]?.word === "one" || names(i + 1)))
    if (!pronoun) continue
    if (table.rows.length > 1) {
      const said = word === "it" ? "it" : `${word} ${tokens[i + 1]!.word}`
      // Which of the rows, the first five: each named, and written as the row it is ("the second
      // one"), so that the chosen question still follows on from the answer before.
      return ask(
        said,
        `Which ${dimension.replace(/^.*\./, "").replaceAll("_", " ")} do you mean by "${said}"?`,
        table.rows.slice(0, 5).map((r, n) => ({ label: String(r[column]), words: `the ${ordinalWords[n]!} one` })),
        `"${said}" could be any of the ${table.rows.length} rows of the last answer: say which (for example ` +
          `"the first one", or its name)`,
        1
      )
    }
    refer(i, word === "it" ? i + 1 : i + 2, table.rows[0]!)
    if (word !== "it") i++
  }
  return references
}
