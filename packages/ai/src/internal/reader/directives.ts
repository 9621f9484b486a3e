/**
 * Instructions about the answer, which are not its content: how to present it ("write a short
 * report", "with a chart", "as a table", "in bullet points", "briefly"), or where it goes ("e-mail
 * it to the team"). A playbook's prompt usually ends with one. They are taken out of the question
 * before it is read, so that they never decline it as words that name nothing, and the answer says
 * it took them as instructions. What they ask for is honoured where it can be: a run charts and
 * reports its result anyway when it can, and delivering is the playbook's.
 *
 * @internal
 */

const sizes = "(?:(?:short|brief|quick|concise|small|simple|detailed|full|one[- ]page|weekly|monthly|daily|quarterly|" +
  "executive|written)\\s+)*"
const documents = "(?:report|summary|write[- ]?up|digest|overview|e-?mail|memo|update|recap|note|briefing)"
const visuals = "(?:(?:bar|line|pie|column|area)\\s+)?(?:chart|graph|plot|visual|visuali[sz]ation|table)s?"

// Each pattern is one instruction; they are taken out one after another, longest first.
const patterns: ReadonlyArray<RegExp> = [
  // "Write a short report (on …)", "prepare a weekly summary of", "give me a quick recap".
  new RegExp(
    `\\b(?:please\\s+)?(?:write|draft|prepare|produce|create|make|compile|put\\s+together|give\\s+me|send\\s+me)` +
      `(?:\\s+(?:me|us))?\\s+(?:(?:a|an|the|my|our)\\s+)?${sizes}${documents}` +
      `(?:\\s+(?:on|about|of|for|covering))?\\b`,
    "gi"
  ),
  // "With a chart", "and a table", "include a bar chart", "plus a graph" (after "and" or "plus", only
  // with an article: "orders by customer and table" may name a dimension).
  new RegExp(
    `(?:,\\s*)?\\b(?:(?:with|including|include|add|attach)\\s+(?:(?:a|an|the)\\s+)?|(?:and|plus)\\s+(?:a|an|the)\\s+)` +
      `${visuals}\\b`,
    "gi"
  ),
  // "As a table", "in bullet points", "in a short paragraph", "in markdown".
  new RegExp(
    `\\b(?:as|in)\\s+(?:(?:a|an)\\s+)?(?:(?:short|brief|single|one)\\s+)?(?:${visuals}|bullet(?:\\s+point)?s|` +
      `list|paragraphs?|markdown|sentences?)\\b`,
    "gi"
  ),
  // "E-mail it to the team", "send this to me", "share the results with sales".
  /\b(?:and\s+)?(?:e-?mail|send|share|post|deliver|forward)\s+(?:it|this|that|them|the\s+(?:results?|report|answer))(?:\s+(?:to|with)\s+[\w.@-]+(?:\s+team)?)?\b/gi,
  // "Keep it short", "briefly", "in short", "summarise": how long, not what.
  /\b(?:keep\s+it\s+(?:short|brief|concise)|briefly|concisely|in\s+(?:short|brief)|summari[sz]e(?:\s+(?:for\s+me|briefly))?)\b/gi
]

/** A question without its instructions, and the instructions as they were written. */
export interface Split {
  readonly question: string
  readonly directives: ReadonlyArray<string>
}

/** Takes the instructions about the answer out of `question`. */
export const split = (question: string): Split => {
  const directives: Array<string> = []
  let rest = question
  for (const pattern of patterns) {
    rest = rest.replace(pattern, (found) => {
      const said = found.replace(/^[,\s]+|[,\s]+$/g, "")
      if (said.length > 0) directives.push(said)
      return " "
    })
  }
  if (directives.length === 0) return { question, directives }
  // In the order they were written.
  directives.sort((a, b) => question.indexOf(a) - question.indexOf(b))
  // What the instructions leave behind: no space before a stop, no stop twice, no comma at the end.
  const tidy = rest.replace(/\s+([.,;:!?])/g, "$1").replace(/([.,;:!?])[.,;:!?]+/g, "$1").trim()
    .replace(/[,;:]+$/, "")
  return { question: tidy, directives }
}
