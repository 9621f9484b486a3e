/**
 * What the offline model never answers, whatever the words around it, each with its true reason:
 * causes, forecasts, and questions that need more than one query (an intersection, a correlation,
 * a share of a part that is not a metric). A semantic query answers one aggregate; these are other
 * questions, and a figure for one of them would answer a different one.
 *
 * @internal
 */

/** A refusal: the reason, and the words of the question that led to it. */
export interface Refusal {
  readonly reason: string
  /** The words (as the question wrote them) it covers, so they are not reported as unknown too. */
  readonly words: ReadonlyArray<string>
}

const rules: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /\b(why|what caused|cause[sd]?|because|explain\w*)\b/,
    "it asks for a cause, and I only read what the data records: I can show the figures around it (for example " +
    "by month, by region or by category) for you to compare"
  ],
  [
    /\b(forecast\w*|predict\w*|project(?:ed|ion|ions)|expect(?:ed)?|will (?:we|it|they|be|there)|next (?:year|month|quarter|week)|going to|outlook|estimate[sd]?)\b/,
    "it asks about the future, and I only read what the data records; a forecast needs a model of its own"
  ],
  [
    /\bboth\b.+\band\b/,
    "it asks for the rows that have both of two things, which takes one query for each and their intersection; " +
    "I answer one query at a time: ask about each on its own"
  ],
  [
    /\b(correlat\w*|relationship between|impact of|effect of|affect\w*)\b/,
    "it asks how two things relate, which takes more than one query and a judgement I cannot make"
  ],
  [
    /\b(never|didn'?t|did not|haven'?t|have not|without any|no longer)\b.*\b(order\w*|bought|buy|purchas\w*|sold|return\w*)\b/,
    "it asks for what did not happen, which takes the full list and what is missing from it: more than one query"
  ],
  [
    /\b(median|percentile|standard deviation|std ?dev|variance)\b/,
    "it asks for a statistic the semantic model does not define, and I compute only the model's metrics"
  ],
  [
    /\b(first|last|latest|most recent|earliest|newest|oldest)\s+(order|purchase|return|sale)s?\b(?!\s+(?:value|count|date))/,
    "it asks for a single row, and I answer aggregates of the semantic model"
  ]
]

/** The first refusal the question calls for, if any. */
export const of = (question: string): Refusal | undefined => {
  const q = question.toLowerCase().replace(/[’‘]/g, "'")
  for (const [pattern, reason] of rules) {
    const found = pattern.exec(q)
    if (found !== null) return { reason, words: found[0].split(/\s+/) }
  }
  return undefined
}
