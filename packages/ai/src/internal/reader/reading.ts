/**
 * The record the reader's phases thread, one stage per phase: each phase takes the stage before it
 * and returns the next, or stops the reading (`Stop`: a decline, or words to look up in the data).
 * The words of the question are fixed; what is accounted for grows as a set of their positions
 * (`covered`), which each phase extends and none changes in place.
 *
 * @internal
 */
import type * as SemanticQuery from "@sightline/core/SemanticQuery"
import type * as Periods from "../periods.js"
import * as Vocabulary from "../vocabulary.js"
import * as Words from "./words.js"

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
  /** Instructions about the answer taken out of the question ("write a short report"), said in the answer. */
  readonly directives?: ReadonlyArray<string> | undefined
  /** A follow-up: the reading it followed on from, what it kept of it and what it changed, said in the answer. */
  readonly followed?: Followed | undefined
  /** How the question was read where the reading alone would not say it ("the share is of all ..."). */
  readonly notes?: ReadonlyArray<string> | undefined
}

/** The reading a follow-up follows on from: the earlier question, as it was read. */
export interface Prior {
  readonly question: string
  readonly read: Read
  /** The rows that answer showed (its first ones), when it showed a table. */
  readonly rows?: { readonly columns: ReadonlyArray<string>; readonly rows: ReadonlyArray<ReadonlyArray<unknown>> }
}

/** How a follow-up was read against the reading before it. */
export interface Followed {
  /** The earlier question. */
  readonly question: string
  /** What it kept of that reading, in words ("revenue", "by region", "2025"). */
  readonly kept: ReadonlyArray<string>
  /** What it changed, in words ("by channel", "channel store", "the top 3"). */
  readonly changed: ReadonlyArray<string>
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
  /**
   * The other words of its run, which the values must hold too ("priya" with "okafor"): a full name
   * is found among more values that share its longest word than one lookup returns.
   */
  readonly with?: ReadonlyArray<string> | undefined
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

/** A decline of one model's reading, with how many words it could not place (the best model wins). */
export interface Refused {
  readonly declined: Declined
  readonly unknown: number
}

/** A way to read words of the question that could mean several things: what to put in their place. */
export interface Option {
  /** What the choice says ("Priya Okafor", "the orders metric"). */
  readonly label: string
  /** The words that replace the ambiguous ones in the question, to make it mean this. */
  readonly words: string
}

/**
 * Words that could mean several things the model knows, and nothing in the question tells which: the
 * reader asks instead of guessing (`reader.ts` writes each option into the question and keeps those
 * that then read). `declined` is said instead when fewer than two options read.
 */
export interface Ambiguous {
  readonly ambiguous: {
    /** The words of the question, as normalized, that could mean several things. */
    readonly said: string
    /** What to ask ("Which Priya do you mean?"). */
    readonly question: string
    readonly options: ReadonlyArray<Option>
    readonly declined: string
  }
  readonly unknown: number
}

/** A question that could mean several things: what to ask, and the complete questions to choose from. */
export interface Clarify {
  readonly clarify: {
    readonly question: string
    readonly choices: ReadonlyArray<{ readonly label: string; readonly question: string }>
    /** The decline a run with no one to answer says instead. */
    readonly declined: string
  }
}

/** Where a phase stops the reading. */
export type Stop = Refused | Lookup | Ambiguous

/** A decline placing `unknown` words. */
export const decline = (declined: string, unknown = 0): Refused => ({ declined: { declined }, unknown })

/** Words to ask about, with the options to offer and the decline if none reads. */
export const ask = (
  said: string,
  question: string,
  options: ReadonlyArray<Option>,
  declined: string,
  unknown = 0
): Ambiguous => ({ ambiguous: { said, question, options, declined }, unknown })

/** Whether a phase stopped the reading. */
export const isStop = (step: object): step is Stop => "declined" in step || "lookup" in step || "ambiguous" in step

/** A word of the question. */
export interface Token {
  readonly word: string
  readonly stem: string
}

/** A phrase of the model at positions `start` to `end` (exclusive) of the question. */
export interface Match {
  readonly start: number
  readonly end: number
  readonly terms: ReadonlyArray<Vocabulary.Term>
}

/** What the question is, before any phase. */
export interface Question {
  /** The question, normalized (`words.normalize`). */
  readonly text: string
  readonly tokens: ReadonlyArray<Token>
  readonly connectorId: number
  readonly now: Date
  /** The model's vocabulary, with the values a lookup found. */
  readonly vocabulary: Vocabulary.Vocabulary
  /** What lookups found on this connector. */
  readonly found: ReadonlyArray<Found>
  /** The found values that name something (`also`: the word alone names the value). */
  readonly foundValues: ReadonlyArray<{ readonly dimension: string; readonly value: string; readonly also?: string }>
  /** "List the categories": the rows themselves. */
  readonly listed: boolean
  /** "When was the last order": `last`, `first`, or `""` for another "when". */
  readonly when: "first" | "last" | "" | undefined
  /** The reading of the conversation's latest question this one may follow on from. */
  readonly prior: Prior | undefined
  /** The positions of the words accounted for. */
  readonly covered: ReadonlySet<number>
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

// The verbs of money that a list ("what do we buy") never takes.
const spendVerbs = new Set([...Words.moneyVerbs].filter((stem) => !/^(?:buy|bought|purchas)/.test(stem)))

/**
 * A normalized question (`Words.normalize`) to read against one connector's model, with what the
 * lookups so far found (those of other connectors are left out).
 */
export const question = (
  text: string,
  modelVocabulary: Vocabulary.Vocabulary,
  connectorId: number,
  now: Date,
  allFound: ReadonlyArray<Found>,
  prior?: Prior | undefined
): Question => {
  const found = allFound.filter((f) => f.connectorId === connectorId)
  const foundValues = valuesFound(found)
  return {
    text,
    tokens: Vocabulary.wordsOf(text).map((word) => ({ word, stem: Vocabulary.stem(word) })),
    connectorId,
    now,
    vocabulary: foundValues.length === 0 ? modelVocabulary : Vocabulary.withValues(modelVocabulary, foundValues),
    found,
    foundValues,
    // "What they are spending by region" asks for money, not a list of regions.
    listed: Words.listing.test(text) && !Words.counting.test(text) &&
      !Vocabulary.wordsOf(text).some((word) => spendVerbs.has(Vocabulary.stem(word))),
    when: Words.whenAsked.test(text)
      ? Words.lastWords.test(text) ? "last" : Words.firstWords.test(text) ? "first" : ""
      : undefined,
    prior,
    covered: new Set()
  }
}

/** After the phrases: what the model's phrases matched, and the words read as others. */
export interface Phrased extends Question {
  /** The positions of the words that name a row of the answer before ("the second one"). */
  readonly referred: ReadonlySet<number>
  readonly matches: ReadonlyArray<Match>
  readonly corrections: ReadonlyArray<readonly [said: string, read: string]>
  /** Metrics named by words apart ("orders were cancelled"), the most specific of each. */
  readonly specific: ReadonlyArray<Vocabulary.Term>
}

/** After the period: the window and the grain. */
export interface Dated extends Phrased {
  readonly years: Periods.Window | undefined
  readonly window: Periods.Window | undefined
  /** Periods compared ("Q1 2025 vs Q1 2024"), earliest first; `window` then spans them. */
  readonly periods?: ReadonlyArray<Periods.Window> | undefined
  /** "Which month had the most": the unit asked for. */
  readonly askedUnit: Periods.Grain | undefined
  /** A standard grain, or a custom granularity of the model by its name. */
  readonly grain: string | undefined
}

/** After the shape: how many rows, in which order, and whether the rows themselves are asked for. */
export interface Shaped extends Dated {
  readonly limit: number | undefined
  readonly direction: "asc" | "desc" | undefined
  readonly asList: boolean
}

/** After the roles: what each phrase names. */
export interface Roled extends Shaped {
  readonly metrics: ReadonlyArray<string>
  readonly dimensions: ReadonlyArray<string>
  readonly filters: ReadonlyMap<string, ReadonlyArray<string | number | boolean>>
  readonly segments: ReadonlyArray<string>
  readonly timeDimension: string | undefined
  /** A ranking within groups kept from the reading a follow-up follows on from (`followUp.ts`). */
  readonly keptPer?: { readonly dimension: string; readonly limit: number } | undefined
  /** Set when the question followed on from the one before (`followUp.ts`). */
  readonly followed?: Followed | undefined
}

/** After the measure: the metrics to compute, or a list of values. */
export interface Measured extends Roled {
  /** The metric a ranking that named none ranks by. */
  readonly assumed: string | undefined
  /** The values themselves, no measure. */
  readonly list: boolean
  /** "The top 3 products in each region": the group each ranking is within, and how many of each. */
  readonly per?: { readonly dimension: string; readonly limit: number | undefined } | undefined
  /** What the answer must say about how the question was read ("the share is of all ..."). */
  readonly notes?: ReadonlyArray<string> | undefined
}

/** `covered` with more positions. */
export const cover = (covered: ReadonlySet<number>, positions: Iterable<number>): ReadonlySet<number> => {
  const next = new Set(covered)
  for (const i of positions) next.add(i)
  return next
}

/** The positions of `tokens` that `keep` keeps. */
export const positions = (tokens: ReadonlyArray<Token>, keep: (token: Token, i: number) => boolean) =>
  tokens.flatMap((token, i) => keep(token, i) ? [i] : [])
