/**
 * The reader's words: those that carry nothing of their own, those that belong to a period, a
 * ranking, a grouping or a count, and the patterns of a question's shape ("list …", "when was …").
 * One home for them: each phase reads them from here.
 *
 * @internal
 */
import * as Vocabulary from "../vocabulary.js"

const stems = (lines: ReadonlyArray<string>): ReadonlySet<string> =>
  new Set(lines.join(" ").split(/\s+/).filter((w) => w.length > 0).map(Vocabulary.stem))

/** Words that carry nothing of their own in a question. */
export const fillers = stems([
  "a an the of in on at for to from with and our we us me my i you your is are was were be been do does did done",
  "what whats which who whom how it its this that these those there their they them please show give tell see get",
  "got have has had can could would should may might let lets know find pull up display report want need",
  "much many total overall all any some every value amount figure figures number count numbers so far just about",
  "as by per each across over vs versus or compared compare comparison against than more most less least fewer",
  "fewest top bottom best worst highest lowest biggest largest smallest greatest leading lead rank ranked ranking",
  "breakdown break broken down split grouped group into among between far anything everything here sum summed",
  "make made makes making earn earned earns earning bring brought generate generated spend spent spending pay paid",
  "sell sold selling sells buy bought buying purchase purchased come came comes out into under within during current",
  "kind type like whole entire place placed &",
  // "How many orders have we handled altogether", "how many different customers": a count is of
  // distinct things already.
  "altogether combined handle handled handling process processed different distinct individual unique separate"
])

/** "The shop", "the company": the business asking, which every figure is of already. */
export const ourselves = stems(["shop company business firm store"])

/** Words that belong to a period or a grain, read once the question has one. */
export const periodish = stems([
  "year years month months quarter quarters week weeks day days last this previous past prior since before after",
  "until till through to date ytd mtd so far ago recent recently today yesterday current running full calendar",
  "first second third fourth half h1 h2 q1 q2 q3 q4 over time trend trends trending daily weekly monthly quarterly",
  "yearly annual annually end start beginning of the in during"
])

/** Verbs of selling: "how many phones did we sell" counts units. */
export const sellVerbs = stems(["sell sold selling"])

/** Verbs of money: "what did Europe spend" measures revenue. */
export const moneyVerbs = stems([
  "make made making earn earned earning bring brought bringing generate generated generating spend spent spending",
  "buy bought purchase purchased"
])

/** Words that rank from the top. */
export const descending = stems(["top best biggest largest most highest greatest leading max maximum"])

/** Words that rank from the bottom. */
export const ascending = stems(["bottom worst smallest least lowest fewest min minimum"])

/**
 * Ranking words that pick rows rather than count them: "the biggest customer in each region" ranks
 * customers, where "the most customers" counts them.
 */
export const rankWords = stems(["top best biggest largest leading bottom worst smallest"])

/** Words before a phrase that group by it ("by customer", "which region"). */
export const groupWords = stems(["by per each every across which what among"])

/** Words before a phrase that count it ("how many customers"). Not stemmed: "number", "count". */
export const countWords: ReadonlySet<string> = new Set(["many", "number", "count"])

/**
 * "List the categories", "who are our customers in Europe", "what products are in Laptops", "which
 * categories do we sell": the rows themselves, not a figure of them.
 */
export const listing =
  /^\s*(?:(?:please\s+)?list|who\s+(?:are|is|were)|name\s+(?:the|all|every)|show\s+(?:me\s+)?(?:all|every|the|our)|(?:what|which)\s+(?:\w+\s+){1,2}(?:are|do|does|is|were|did)\b)/

/** A figure is asked for, even of a list. */
export const counting = /\b(?:how many|number of|count|total|sum|average|mean)\b/

/** "When was the last order", "when did we first sell a phone". */
export const whenAsked = /^\s*when\b/
export const lastWords = /\b(?:last|latest|most recent|newest|recent|final)\b/
export const firstWords = /\b(?:first|earliest|oldest)\b/

// Contractions spelt out: "haven't" is "have not" (a "not" that a reading must place, not skip),
// "they're" is "they are".
const contractions: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bwon't\b/g, "will not"],
  [/\bcan't\b/g, "can not"],
  [/n't\b/g, " not"],
  [/'re\b/g, " are"],
  [/'ve\b/g, " have"],
  [/'ll\b/g, " will"],
  [/'d\b/g, " would"],
  [/\bi'm\b/g, "i am"]
]

/** The question as words: short forms and contractions spelt out, apostrophes and currency signs read. */
export const normalize = (question: string): string =>
  contractions.reduce(
    (text, [pattern, long]) => text.replace(pattern, long),
    question.replace(/[’‘]/g, "'").toLowerCase()
  ).replace(/\$/g, " dollars ").replace(/#/g, " number ").replace(/'s\b/g, "")
    .split(/(\s+)/).map((part) => {
      const bare = part.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "")
      const long = Vocabulary.shortForms.get(bare)
      return long === undefined ? part : part.toLowerCase().replace(bare, long)
    }).join("").toLowerCase()

/** `"a", "b"`. */
export const quote = (words: ReadonlyArray<string>) => words.map((w) => `"${w}"`).join(", ")

/**
 * `text` with the first whole-word occurrence of `phrase` (words apart by spaces) replaced by
 * `words`, ignoring case and the punctuation between its words; undefined when it holds none.
 */
export const replacePhrase = (text: string, phrase: string, words: string): string | undefined => {
  const escaped = phrase.split(" ").map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escaped.join("[^\\p{L}\\p{N}]+")}(?![\\p{L}\\p{N}])`, "iu")
  const at = pattern.exec(text)
  return at === null ? undefined : `${text.slice(0, at.index)}${words}${text.slice(at.index + at[0].length)}`
}

/** `a, b or c`. */
export const listOr = (items: ReadonlyArray<string>) =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`

/**
 * A question that follows on from the one before: it starts as a reply does ("and per channel?",
 * "what about units?", "just the stores") or says so ("by quarter instead", "same for last year").
 * "Only" and "just" count only at the start: "revenue by region for web orders only" is complete.
 */
export const followUpCue =
  /^\s*(?:and|also|what about|how about|now|same|ok(?:ay)?|then|but|just|only|instead)\b|\b(?:instead|too|as well|same|again)\b/

/** A follow-up that compares the reading before with the period it names ("vs Q1 2024", "compared to 2024"). */
export const comparesCue = /^\s*(?:and\s+)?(?:vs\.?|versus|compared? (?:to|with)|against)\b/

/** A follow-up that replaces the breakdown with what it names, a grain too ("by quarter instead"). */
export const replacesCue = /\binstead\b/

/** A follow-up that adds a breakdown to the one before rather than replacing it ("by channel too"). */
export const addsCue = /\b(?:also|too|as well|additionally)\b/

/** The small words of conversation, placed only when the question follows on from another. */
export const conversationWords = stems([
  "and also what about how now same ok okay then but just only instead too as well again thing things one ones",
  "there additionally"
])
