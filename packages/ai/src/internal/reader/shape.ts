/**
 * Phase 3, the shape: a count of rows to keep ("top 5"), the order ("most", "lowest"), whether the
 * rows themselves are asked for ("list the categories"). Then every word must be accounted for: a
 * word that is not is looked up in the data (it may be a name, "Helix Mini"), and once looked up,
 * declines the question, naming it; or, when it is part of several names or as near to several
 * known words, asks which is meant.
 *
 * @internal
 */
import * as Vocabulary from "../vocabulary.js"
import {
  type Ambiguous,
  ask,
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
export const read = (dated: Dated): Shaped | Lookup | Refused | Ambiguous => {
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
const unplaced = (shaped: Shaped): Lookup | Refused | Ambiguous | undefined => {
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
  // Each run's longest word; and, for a run of several words, the values holding all of them too.
  const searches: ReadonlyArray<Search> = words.length === runs.length && runs.length <= 2
    ? words.flatMap((word, r) => {
      if (found.some((f) => f.word === word)) return []
      const others = runs[r]!.filter((w) => w !== word && w.length >= 3 && !/^\d+$/.test(w))
      return vocabulary.searchable.flatMap((dimension) => [
        { connectorId, word, dimension },
        ...(others.length === 0 ? [] : [{ connectorId, word, dimension, with: others }])
      ])
    })
    : []
  if (searches.length > 0) return { lookup: searches }
  // What a lookup found that the question did not name in full.
  const failed = found.find((f) => unknown.includes(f.word) && f.failed !== undefined)
  if (failed !== undefined) return decline(`I could not look "${failed.word}" up in the data: ${failed.failed}`)
  const holding = found.filter((f) => unknown.includes(f.word))
    .flatMap((f) => f.values.filter((v) => Vocabulary.wordsOf(v).includes(f.word)).map((value) => ({ ...f, value })))
  const notFound = found.some((f) => unknown.includes(f.word)) && holding.length === 0
  if (holding.length > 0) {
    // "Orders of Priya" where several customers are called Priya: which one is meant.
    const word = holding[0]!.word
    const values = [...new Set(holding.filter((f) => f.word === word).map((f) => f.value))]
    const declined = `"${word}" is part of ${Words.listOr(values.slice(0, 5).map((v) => `"${v}"`))}: say which`
    return ask(
      word,
      `Which "${word}" do you mean?`,
      values.slice(0, 5).map((value) => ({ label: value, words: value })),
      declined,
      unknown.length - 1
    )
  }
  // A misspelling as near to several known words ("ordres": orders or order date): which one.
  const near = unknown.length === 1 ? Vocabulary.nearest(vocabulary, Vocabulary.stem(unknown[0]!)) : []
  // Only the known words that name something alone can stand in its place.
  const said = [...new Set(near.flatMap((stem) => vocabulary.terms.get(stem)?.slice(0, 1).map((t) => t.said) ?? []))]
  if (said.length > 1) {
    const word = unknown[0]!
    return ask(
      word,
      `What did you mean by "${word}"?`,
      said.map((words) => ({ label: words, words })),
      `"${word}" is as near to ${Words.listOr(said.map((w) => `"${w}"`))}: say which`,
      1
    )
  }
  return decline(
    `I don't know what ${Words.quote(unknown)} ${unknown.length === 1 ? "picks" : "pick"} out here: the semantic ` +
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
