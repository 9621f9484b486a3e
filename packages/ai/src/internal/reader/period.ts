/**
 * Phase 2, the period: the window the question keeps to ("last quarter", "in 2024", a period the
 * model names such as "back to school") and the grain
 * it is read at ("by month", "which month"). With either, the words of periods are accounted for;
 * a period that has not begun is declined, since the data records only what happened.
 *
 * @internal
 */
import * as Periods from "../periods.js"
import * as Vocabulary from "../vocabulary.js"
import { type Ambiguous, ask, cover, type Dated, decline, type Phrased, positions, type Refused } from "./reading.js"
import * as Words from "./words.js"

/** The period and the grain, or a decline. */
export const read = (phrased: Phrased): Dated | Refused | Ambiguous => {
  const { matches, now, tokens } = phrased
  // "12/11/2025" is the 12th of November in some countries and the 11th of December in others: asked
  // which; "25/12/2025" can only be one of them.
  const orders = Periods.dayOrders(phrased.text)
  if (orders !== undefined && orders.days.length > 1) {
    const said = Vocabulary.wordsOf(orders.said).join(" ")
    return ask(
      said,
      `Which day do you mean by "${orders.said}"?`,
      orders.days.map((day) => ({ label: day.label, words: day.iso })),
      "I read a day written as 2025-12-24 or December 24, 2025, not 12/24/2025, whose order differs by country"
    )
  }
  if (orders !== undefined && orders.days.length === 0) {
    return decline(`the day the question names (${orders.said}) is not in the calendar, whichever its order`)
  }
  const text = orders?.days.length === 1 ? phrased.text.replace(orders.said, orders.days[0]!.iso) : phrased.text
  // A period the model names ("back to school 2024") is read from the model, not the calendar.
  const named =
    matches.flatMap((m) => m.terms.flatMap((t) => t.target.kind === "period" ? [{ term: t, match: m }] : []))[0]
  // "Q1 2025 vs Q1 2024": the two quarters, not the years between them. Whole years in a row stay
  // a series by year ("2024 vs 2025").
  const compared = named === undefined ? Periods.comparedOf(text, now) : undefined
  if (compared !== undefined && "unreadable" in compared) return decline(compared.unreadable)
  const series = compared === undefined ? undefined : Periods.yearSeries(compared)
  const periods = series === undefined ? compared : undefined
  const years = named === undefined && periods === undefined ? series ?? Periods.yearsOf(text) : undefined
  const window = periods !== undefined
    ? { from: periods[0]!.from, to: periods.at(-1)!.to, label: periods.map((p) => p.label).join(" and ") }
    : named !== undefined && named.term.target.kind === "period"
    ? Periods.namedWindow(
      tokens.slice(named.match.start, named.match.end).map((t) => t.word).join(" "),
      named.term.target.period,
      text,
      now
    )
    : years ?? Periods.windowOf(text, now)
  if (window !== undefined && "unreadable" in window) return decline(window.unreadable)
  const unbegun = (periods ?? (window === undefined ? [] : [window])).find((p) =>
    p.from !== undefined && p.from > now.toISOString().slice(0, 10)
  )
  if (unbegun !== undefined) {
    return decline(
      `it asks about a period that has not begun (${unbegun.label}), and I only read what the data records`
    )
  }
  // "Which month had the most": each month's figure, ranked.
  const askedUnit = /\b(?:which|what)\s+(day|week|month|quarter|year)\b/.exec(text)?.[1] as Periods.Grain | undefined
  // "Monthly price" names a measure of the model, not a series by month.
  const unnamed = tokens.filter((_, i) =>
    !matches.some((m) => i >= m.start && i < m.end && m.terms.some((t) => t.target.kind !== "period"))
  ).map((t) => t.word).join(" ")
  // "By fiscal year": a custom granularity of the model, by its name, label or synonym.
  const custom =
    matches.flatMap((m) =>
      m.terms.flatMap((t) => t.target.kind === "grain" ? [{ match: m, name: t.target.name }] : [])
    )[0]
  const grain = custom?.name ?? Periods.grainOf(unnamed) ?? askedUnit ??
    (years === undefined ? undefined : "year")
  const dated = { ...phrased, years, window, periods, askedUnit, grain }
  if (window === undefined && grain === undefined) return dated
  const ranking = /\b(top|bottom) \d/.test(text)
  return {
    ...dated,
    covered: cover(
      custom === undefined
        ? phrased.covered
        : cover(phrased.covered, positions(tokens, (_, i) => i >= custom.match.start && i < custom.match.end)),
      positions(tokens, (token) =>
        Words.periodish.has(token.stem) || Periods.periodWords.has(token.word) ||
        (window !== undefined && /^(19|20)\d{2}$/.test(token.word)) ||
        (window !== undefined && /^\d{1,3}$/.test(token.word) && !ranking))
    )
  }
}
