/**
 * Phase 3, the shape: a count of rows to keep ("top 5"), the order ("most", "lowest"), whether the
 * rows themselves are asked for ("list the categories"). Then every word must be accounted for: a
 * word that is not is looked up in the data (it may be a name, "Helix Mini"), and once looked up,
 * declines the question, naming it.
 *
 * @internal
 */
import * as Vocabulary from "../vocabulary.js"
import {
  cover,
  type Dated,
  decline,
  type Lookup,
  positions,
  type Refused,
  type Search,
  type Shaped
} from "./reading.js"
import * as Words from "./words.js"

/** The shape of the question, once every word is accounted for; or words to look up, or a decline. */
export const read = (dated: Dated): Shaped | Lookup | Refused => {
  const { text, tokens, when } = dated
  const limitFound =
    /\b(?:top|bottom|first|best|worst|biggest|largest|smallest|highest|lowest|which|what)\s+(\d{1,4})\b/.exec(text) ??
      /\b(\d{1,4})\s+(?:best|worst|biggest|largest|smallest|highest|lowest|top|bottom|most|least)\b/.exec(text)
  // "Our best selling category", "the top product": one thing ranked first, not the ranking.
  const singular = limitFound === null && !dated.listed ? onlyFirst(dated) : false
  const limit = limitFound === null ? singular ? 1 : undefined : Number(limitFound[1])
  // "The top one" picks a row of the answer before: it ranks nothing.
  const ranking = tokens.filter((_, i) => !dated.referred.has(i))
  const direction = ranking.some((t) => Words.ascending.has(t.stem))
    ? "asc"
    : ranking.some((t) => Words.descending.has(t.stem))
    ? "desc"
    : undefined
  // "Who are our top 10 customers" ranks them by a figure: no list.
  const asList = dated.listed && direction === undefined
  const covered = cover(
    dated.covered,
    positions(tokens, (token, i) =>
      (limitFound !== null && token.word === limitFound[1]) ||
      Words.fillers.has(token.stem) || Words.ourselves.has(token.stem) ||
      (when !== undefined &&
        (token.word === "when" || /^(?:first|earliest|oldest|last|latest|recent|newest|final)$/.test(token.word))) ||
      (dated.listed && /^(?:list|who|name|show)$/.test(token.word)) ||
      (dated.prior !== undefined && Words.conversationWords.has(token.stem)) ||
      // "Lowest first", "biggest first": an order.
      (token.word === "first" && i > 0 && rankWord(tokens[i - 1]!.stem)))
  )
  const shaped: Shaped = { ...dated, limit, direction, asList, covered }
  return unplaced(shaped) ?? shaped
}

const rankWord = (stem: string) => Words.descending.has(stem) || Words.ascending.has(stem)

/**
 * Whether a ranking word is followed by one thing named in the singular ("best selling category",
 * "the top product", "our biggest customer"), which asks for the first row only. A plural ("top
 * products"), or "which … the most" (every row, ranked), asks for the ranking.
 */
const onlyFirst = ({ matches, referred, tokens }: Dated): boolean =>
  tokens.some((token, i) => {
    if (referred.has(i) || !rankWord(token.stem) || /^(?:most|least)$/.test(token.word)) return false
    // The thing ranked: the next word, past a verb of selling or performing.
    const at = /^(?:selling|performing|earning|grossing)$/.test(tokens[i + 1]?.word ?? "") ? i + 2 : i + 1
    const thing = matches.find((m) => m.start === at && m.end === at + 1)
    return thing !== undefined && thing.terms.some((t) => t.target.kind === "dimension") &&
      tokens[at]!.word === tokens[at]!.stem && !tokens[at]!.word.endsWith("s")
  })

/**
 * The words no phase placed: each run of them is looked up (its longest word) in the values the
 * model does not list, and the question read again with what was found; once looked up, a decline
 * that names them, or that asks which of the values holding one is meant.
 */
const unplaced = (shaped: Shaped): Lookup | Refused | undefined => {
  const { connectorId, covered, found, tokens, vocabulary } = shaped
  const unknown = [...new Set(tokens.filter((_, i) => !covered.has(i)).map((t) => t.word))]
  if (unknown.length === 0) return undefined
  const runs: Array<Array<string>> = []
  tokens.forEach((token, i) => {
    if (covered.has(i)) return
    if (i > 0 && !covered.has(i - 1)) runs.at(-1)!.push(token.word)
    else runs.push([token.word])
  })
  const words = runs.map((run) => run.reduce((a, b) => b.length > a.length ? b : a))
    .filter((word) => word.length >= 3 && !/^\d+$/.test(word))
  const searches: ReadonlyArray<Search> = words.length === runs.length && runs.length <= 2
    ? words.flatMap((word) =>
      found.some((f) => f.word === word)
        ? []
        : vocabulary.searchable.map((dimension) => ({ connectorId, word, dimension }))
    )
    : []
  if (searches.length > 0) return { lookup: searches }
  // What a lookup found that the question did not name in full.
  const failed = found.find((f) => unknown.includes(f.word) && f.failed !== undefined)
  if (failed !== undefined) return decline(`I could not look "${failed.word}" up in the data: ${failed.failed}`)
  const holding = found.filter((f) => unknown.includes(f.word))
    .flatMap((f) => f.values.filter((v) => Vocabulary.wordsOf(v).includes(f.word)).map((value) => ({ ...f, value })))
  const notFound = found.some((f) => unknown.includes(f.word)) && holding.length === 0
  return decline(
    holding.length > 0
      ? `"${holding[0]!.word}" is part of ${
        Words.listOr([...new Set(holding.map((f) => f.value))].slice(0, 5).map((v) => `"${v}"`))
      }: say which`
      : `I don't know what ${Words.quote(unknown)} ${unknown.length === 1 ? "picks" : "pick"} out here: the semantic ` +
        `model has no metric, dimension, value or filter by ${unknown.length === 1 ? "that name" : "those names"}` +
        `${
          notFound
            ? `, and no ${
              Words.listOr(vocabulary.searchable.map((d) => d.replace(/[._]/g, " ")))
            } in the data is called so`
            : ""
        }. It knows, for example: ${vocabulary.metrics.slice(0, 8).join(", ")}`,
    unknown.length
  )
}
