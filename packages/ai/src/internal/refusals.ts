/**
 * What the offline model never answers, whatever the words around it, each with its true reason:
 * causes, forecasts, and questions that need more than one query (an intersection, a correlation).
 * One query answers one aggregate; these are other questions, and a figure
 * for one of them would answer a different one.
 *
 * @internal
 */

/** A refusal: its reason, in words that can follow "I can't answer this: ". */
export interface Refusal {
  readonly reason: string
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
  ]
]

/** The first refusal the question calls for, if any. */
export const of = (question: string): Refusal | undefined => {
  const q = question.toLowerCase().replace(/[’‘]/g, "'")
  for (const [pattern, reason] of rules) {
    if (pattern.test(q)) return { reason }
  }
  return undefined
}
