/**
 * The periods a question names, for the offline model's reader: the window it keeps to ("last
 * year", "Q3 2025", "the past 7 days"), the buckets of a series ("monthly") and the words that
 * name them.
 *
 * @internal
 */
import * as SemanticReading from "@sightline/core/SemanticReading"

/** A time bucket. */
export type Grain = "day" | "week" | "month" | "quarter" | "year"

/** The calendar window the question names (UTC), if any; a side is open when it is absent. */
export interface Window {
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly label: string
}

/** A period the question names in a way the reader does not read ("between March and May"). */
export interface Unreadable {
  readonly unreadable: string
}

const isoDate = (d: Date) => d.toISOString().slice(0, 10)

/** The months' names, January first, as the reader matches them: the compiler's own, in lower case. */
export const monthNames = SemanticReading.monthNames.map((month) => month.toLowerCase())
// A month's name or its three-letter abbreviation ("sept" too); "may" only as a whole name.
const monthPattern = "(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|" +
  "oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
const monthLabel = (index: number, year: number) =>
  `${monthNames[index]!.charAt(0).toUpperCase()}${monthNames[index]!.slice(1)} ${year}`
const monthIndex = (name: string) => monthNames.findIndex((month) => month.startsWith(name.slice(0, 3)))
const ordinals: Record<string, number> = {
  first: 1,
  "1st": 1,
  second: 2,
  "2nd": 2,
  third: 3,
  "3rd": 3,
  fourth: 4,
  "4th": 4
}

/** `months` months from the first of month `first` (0-based, may pass December) of `year`. */
const monthsWindow = (year: number, first: number, months: number, label: string): Window => ({
  from: isoDate(new Date(Date.UTC(year, first, 1))),
  to: isoDate(new Date(Date.UTC(year, first + months, 1))),
  label
})

// What follows, when a period does.
const periodAhead =
  "(?=(?:the\\s+)?(?:q[1-4]|h[12]|\\d{4}|last|this|previous|first|second|third|fourth|1st|2nd|3rd|4th|" +
  `today|yesterday|${monthPattern}|\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?${monthPattern})\\b)`
const rangeWord = new RegExp(
  "\\b(since|after|before|until|till|prior to|through)\\s+(?:the\\s+(start|beginning|end)\\s+of\\s+)?" + periodAhead
)
// Part of a period ("late 2025", "mid-March", "the end of last year"), which no window reads: it
// was answered for the whole period.
const partWord = new RegExp(
  `\\b(?:early|late|mid|(?:the\\s+)?(?:middle|start|beginning|end)\\s+of)[\\s-]+${periodAhead}`
)

// Some weeks, days or months of a period ("the first week of 2025", "the first 10 days of March"),
// which no window reads either: the whole period was answered. "The last month of 2025" is read.
const someOf = new RegExp(
  "\\b(?!(?:last|final)\\s+month\\s+of\\b)(?:(?:first|second|third|fourth|fifth|last|final|1st|2nd|3rd|4th|5th)" +
    "(?:\\s+(?:\\d{1,3}|few|two|three|four|five|six|seven|ten))?|\\d{1,2}(?:st|nd|rd|th))\\s+(?:weeks?|days?|months?)\\s+of\\s+" +
    periodAhead
)

/** A period's label without its preposition: "in March 2025" → "March 2025". */
// The words that name a year: what the first end of a range takes from the second.
const yearWords = /\b(?:last year|this year|previous year|(?:19|20)\d{2})\b/

const bare = (window: Window) => window.label.replace(/^(?:in|on) /, "")

/**
 * A day written with its parts in an order that differs by country ("12/11/2025"): the days it can
 * be, as ISO dates with their labels; one when the other order is no day ("25/12/2025").
 */
export const dayOrders = (
  question: string
):
  | { readonly said: string; readonly days: ReadonlyArray<{ readonly iso: string; readonly label: string }> }
  | undefined =>
{
  const found = /(?<![\d/.])(\d{1,2})[/.](\d{1,2})[/.](\d{4}|\d{2})(?![\d/.])/.exec(question)
  if (found === null) return undefined
  const [, a, b, y] = found
  const year = y!.length === 2 ? 2000 + Number(y) : Number(y)
  const days: Array<{ iso: string; label: string }> = []
  for (const [month, date] of [[Number(a), Number(b)], [Number(b), Number(a)]] as const) {
    const day = new Date(Date.UTC(year, month - 1, date))
    if (month < 1 || month > 12 || day.getUTCMonth() !== month - 1 || day.getUTCDate() !== date) continue
    const iso = isoDate(day)
    if (!days.some((d) => d.iso === iso)) days.push({ iso, label: `${date} ${monthLabel(month - 1, year)}` })
  }
  return { said: found[0], days }
}

/**
 * Reads a time window, as `periodOf` does, or a range around a period: "since March 2025" and
 * "after 2024" run to today, "before 2025" and "until Q2 2025" from the first row. A range between
 * two periods ("between January and March 2025") runs from the first's start to the second's end.
 * Two periods compared ("Q4 vs Q3 2025"), or a range and a period ("in 2025 before March"), is not
 * read: answered as one of its ends, it was another question.
 */
export const windowOf = (question: string, now: Date): Window | Unreadable | undefined => {
  const q = question.toLowerCase()
  // "12/11/2025" is the 11th of December in some countries and the 12th of November in others; its
  // year alone was read.
  if (/\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b/.test(q)) {
    return {
      unreadable:
        "I read a day written as 2025-12-24 or December 24, 2025, not 12/24/2025, whose order differs by country"
    }
  }
  // "February 30" is no day; its year alone was read.
  if (dayOf(q, now) === null) return { unreadable: "the day the question names is not in the calendar" }
  // A range between two periods, each read as "in …" (which a month alone needs), the first in the
  // second's year when it names none ("between March and May last year"): from the start of the
  // first to the end of the second. "From web and store in 2025" names no period on its left.
  const between = /\b(?:between|from)\s+(.+?)\s+(?:and|to|until|till|through)\s+(.+)/.exec(q)
  if (between !== null) {
    const year = yearWords.exec(between[2]!)?.[0]
    const first = periodOf(
      `in ${between[1]}${year === undefined || yearWords.test(between[1]!) ? "" : ` ${year}`}`,
      now
    )
    const last = periodOf(`in ${between[2]}`, now)
    if (first?.from !== undefined && last?.to !== undefined) {
      if (first.from >= last.to) {
        return { unreadable: `the range starts (${bare(first)}) after it ends (${bare(last)})` }
      }
      return { from: first.from, to: last.to, label: `from ${bare(first)} to ${bare(last)}` }
    }
  }
  // Two periods to compare, each read as "in …".
  const two = /^(.+?)\s+(?:vs\.?|versus|compared (?:to|with)|against)\s+(.+)/.exec(q)
  if (two !== null && periodOf(`in ${two[1]}`, now) !== undefined && periodOf(`in ${two[2]}`, now) !== undefined) {
    return {
      unreadable: "I read one period, or a range that starts or ends with one (\"since March 2025\", " +
        "\"before 2025\"), not a range between two or two to compare: ask for a series, for example " +
        "\"revenue by month in 2025\""
    }
  }
  // A range word right before a period; before anything else ("through the web"), no range.
  const range = rangeWord.exec(q)
  // Read as "in …", which a month alone needs ("before March").
  const period = range === null ? undefined : periodOf(`in ${q.slice(range.index + range[0].length)}`, now)
  if (range === null || period === undefined) {
    if (someOf.test(q)) {
      return {
        unreadable: "I read whole periods (a year, a quarter, a month, a week or days), not some weeks or days of " +
          "one: ask for a series instead, for example \"revenue by week in January 2025\""
      }
    }
    return partWord.test(q) ?
      {
        unreadable: "I read whole periods (a year, a quarter, a month, a week or days), not the early, middle or " +
          "late part of one: name it, for example \"revenue in Q4 2025\""
      } :
      periodOf(q, now)
  }
  if (periodOf(q.slice(0, range.index), now) !== undefined) {
    return { unreadable: "I read one period at a time: name one, or a range that starts or ends with one" }
  }
  const tomorrow = isoDate(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)))
  // The edge the question names ("until the end of 2025"), else the word's own: since and before
  // the start, after and until the end.
  const edge = range[2] === undefined ? undefined : range[2] === "end" ? "end" : "start"
  const at = (own: "start" | "end") => (edge ?? own) === "start" ? period.from : period.to
  // In the question's words; "until 2025" is said in full.
  const label = (word: string) =>
    `${word} ${range[2] === undefined ? word === "until" ? "the end of " : "" : `the ${range[2]} of `}${bare(period)}`
  switch (range[1]) {
    case "since":
      return { from: at("start"), to: tomorrow, label: label("since") }
    case "after":
      return { from: at("end"), to: tomorrow, label: label("after") }
    case "before":
    case "prior to":
      return { to: at("start"), label: label("before") }
    default:
      return { to: at("end"), label: label("until") }
  }
}

/**
 * Reads a time window: a year ("in 2024", "last year", "this year"), a quarter ("Q3 2025", "the
 * third quarter of last year", "last quarter"), a half ("H1 2025"), a month ("March 2025", "in
 * March", "last month"), a week ("last week") or "the last N days". A quarter, half or month named
 * without a year is the latest one that has begun.
 */
const periodOf = (question: string, now: Date): Window | undefined => {
  const q = question.toLowerCase()
  const year = now.getUTCFullYear()
  const month = now.getUTCMonth()
  const yearWindow = (y: number): Window => ({ from: `${y}-01-01`, to: `${y + 1}-01-01`, label: `in ${y}` })
  const namedYear = namedYearOf(q, now)
  // The year of the latest period starting at month `first` that has begun, unless a year is named.
  const latest = (first: number) => namedYear ?? (first <= month ? year : year - 1)

  const day = dayOf(q, now)
  if (day !== undefined && day !== null) {
    const from = isoDate(day)
    return { from, to: isoDate(new Date(day.getTime() + 86_400_000)), label: `on ${from}` }
  }
  // "The last quarter of 2025" is its fourth, not the quarter before this one.
  const ofYear = namedYear === undefined ? null : /\b(?:last|final) (quarter|half|month) of\b/.exec(q)
  if (ofYear !== null) {
    const [first, months] = ofYear[1] === "quarter" ? [9, 3] : ofYear[1] === "half" ? [6, 6] : [11, 1]
    const label = ofYear[1] === "quarter"
      ? `Q4 ${namedYear}`
      : ofYear[1] === "half"
      ? `H2 ${namedYear}`
      : monthLabel(11, namedYear!)
    return monthsWindow(namedYear!, first, months, `in ${label}`)
  }
  const quarter = /\bq([1-4])\b/.exec(q)?.[1] ??
    ((ordinal) => ordinal === undefined ? undefined : String(ordinals[ordinal]))(
      /\b(first|1st|second|2nd|third|3rd|fourth|4th) quarter\b/.exec(q)?.[1]
    )
  if (quarter !== undefined) {
    const first = (Number(quarter) - 1) * 3
    return monthsWindow(latest(first), first, 3, `in Q${quarter} ${latest(first)}`)
  }
  const current = Math.floor(month / 3) * 3
  if (/\b(?:last|previous) quarter\b/.test(q)) {
    const from = new Date(Date.UTC(year, current - 3, 1))
    return monthsWindow(year, current - 3, 3, `in Q${from.getUTCMonth() / 3 + 1} ${from.getUTCFullYear()}`)
  }
  if (/\bthis quarter\b|\bquarter to date\b/.test(q)) {
    return monthsWindow(year, current, 3, `in Q${current / 3 + 1} ${year} so far`)
  }
  const half = /\bh([12])\b/.exec(q)?.[1] ?? (/\b(first|second) half\b/.exec(q)?.[1] === "first"
    ? "1"
    : /\bsecond half\b/.test(q)
    ? "2"
    : undefined)
  if (half !== undefined) {
    const first = half === "1" ? 0 : 6
    return monthsWindow(latest(first), first, 6, `in H${half} ${latest(first)}`)
  }
  const monthName = new RegExp(`\\b${monthPattern} (?:of )?(\\d{4})\\b`).exec(q) ??
    new RegExp(`\\b(?:in|during|for) ${monthPattern}\\b`).exec(q)
  if (monthName !== null) {
    const index = monthIndex(monthName[1]!)
    return monthsWindow(latest(index), index, 1, `in ${monthLabel(index, latest(index))}`)
  }
  // "Last December" is the latest December that has ended; "this March" is this year's.
  const nearMonth = new RegExp(`\\b(last|previous|this) ${monthPattern}\\b`).exec(q)
  if (nearMonth !== null) {
    const index = monthIndex(nearMonth[2]!)
    const y = nearMonth[1] === "this" ? year : index < month ? year : year - 1
    return monthsWindow(y, index, 1, `in ${monthLabel(index, y)}`)
  }
  if (/\blast year\b|\bprevious year\b/.test(q)) return yearWindow(year - 1)
  if (/\bthis year\b|\byear to date\b|\bytd\b/.test(q)) return { ...yearWindow(year), label: `in ${year} so far` }
  const named = /\b(?:in|during|for) (\d{4})\b/.exec(q) ?? /\b(20\d{2}|19\d{2})\b/.exec(q)
  if (named !== null) return yearWindow(Number(named[1]))
  if (/\b(?:last|previous) month\b/.test(q)) {
    return monthsWindow(year, month - 1, 1, `in ${monthLabel((month + 11) % 12, month === 0 ? year - 1 : year)}`)
  }
  if (/\bthis month\b|\bmonth to date\b|\bmtd\b/.test(q)) {
    return monthsWindow(year, month, 1, `in ${monthLabel(month, year)} so far`)
  }
  // Weeks start on Monday, as PostgreSQL's do.
  const monday = new Date(Date.UTC(year, month, now.getUTCDate() - ((now.getUTCDay() + 6) % 7)))
  if (/\b(?:last|previous) week\b/.test(q)) {
    const from = new Date(monday.getTime() - 7 * 86_400_000)
    return { from: isoDate(from), to: isoDate(monday), label: `in the week of ${isoDate(from)}` }
  }
  if (/\bthis week\b/.test(q)) {
    const to = new Date(monday.getTime() + 7 * 86_400_000)
    return { from: isoDate(monday), to: isoDate(to), label: `in the week of ${isoDate(monday)} so far` }
  }
  // Rolling windows end with today: "the last 30 days", "the past 3 months", "the past year".
  const today = now.getUTCDate()
  const tomorrow = isoDate(new Date(Date.UTC(year, month, today + 1)))
  if (/\btoday\b/.test(q)) {
    return { from: isoDate(new Date(Date.UTC(year, month, today))), to: tomorrow, label: "today" }
  }
  if (/\byesterday\b/.test(q)) {
    const from = isoDate(new Date(Date.UTC(year, month, today - 1)))
    return { from, to: isoDate(new Date(Date.UTC(year, month, today))), label: `yesterday (${from})` }
  }
  const several = /\b(?:last|past|previous) (\d+) (day|week|month)s?\b/.exec(q)
  const one = /\bpast (day|week|month|year)\b/.exec(q)
  const rolling = several !== null
    ? { n: Number(several[1]), unit: several[2]! }
    : one !== null
    ? { n: 1, unit: one[1]! }
    : undefined
  if (rolling !== undefined) {
    const { n, unit } = rolling
    const from = unit === "day" || unit === "week"
      ? new Date(Date.UTC(year, month, today + 1 - n * (unit === "week" ? 7 : 1)))
      : new Date(Date.UTC(year, month - n * (unit === "year" ? 12 : 1), today + 1))
    return { from: isoDate(from), to: tomorrow, label: `in the last ${n === 1 ? unit : `${n} ${unit}s`}` }
  }
  return undefined
}

/**
 * A day the question names: "2025-12-24", "December 24, 2025", "24 December 2025", or without a year
 * ("on December 24") the latest that has begun; `null` for a day the calendar lacks ("February 30").
 */
const dayOf = (q: string, now: Date): Date | null | undefined => {
  const iso = /\b(\d{4})-(\d{2})-(\d{2})\b/.exec(q)
  const monthFirst = new RegExp(`\\b${monthPattern}\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?:,?\\s+(\\d{4})\\b)?`).exec(q)
  // Not a ranking's number: "the top 5 June orders".
  const dayFirst = new RegExp(
    `(?<!\\b(?:top|bottom|best|worst|first|last)\\s+)\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${monthPattern}\\b` +
      `(?:,?\\s+(\\d{4})\\b)?`
  ).exec(q)
  const [year, month, date] = iso !== null
    ? [Number(iso[1]), Number(iso[2]) - 1, Number(iso[3])]
    : monthFirst !== null
    ? [
      monthFirst[3] === undefined ? undefined : Number(monthFirst[3]),
      monthIndex(monthFirst[1]!),
      Number(monthFirst[2])
    ]
    : dayFirst !== null
    ? [dayFirst[3] === undefined ? undefined : Number(dayFirst[3]), monthIndex(dayFirst[2]!), Number(dayFirst[1])]
    : []
  if (month === undefined || date === undefined) return undefined
  const on = (y: number) => new Date(Date.UTC(y, month, date))
  const real = (day: Date) => day.getUTCMonth() === month && day.getUTCDate() === date
  const named = year ?? namedYearOf(q, now)
  if (named !== undefined) return real(on(named)) ? on(named) : null
  // The latest that has begun; a February 29 is in a leap year.
  for (let y = now.getUTCFullYear(); y > now.getUTCFullYear() - 8; y--) if (real(on(y)) && on(y) <= now) return on(y)
  return null
}

/**
 * The window of a period the model names ("back to school"): its days once, or its occurrence in the
 * year the question names, or else the latest that has begun. The label says which days.
 */
export const namedWindow = (
  said: string,
  period: {
    readonly from?: string | undefined
    readonly to?: string | undefined
    readonly every_year?: { readonly from: string; readonly to: string } | undefined
  },
  question: string,
  now: Date
): Window => {
  const dayAfter = (day: string) => isoDate(new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000))
  if (period.every_year === undefined) {
    return { from: period.from!, to: dayAfter(period.to!), label: `in ${said} (${period.from} to ${period.to})` }
  }
  const { from, to } = period.every_year
  const today = isoDate(now)
  const named = namedYearOf(question.toLowerCase(), now)
  const year = named ?? (`${now.getUTCFullYear()}-${from}` <= today ? now.getUTCFullYear() : now.getUTCFullYear() - 1)
  // A range that ends before it starts ("12-20" to "01-05") runs into the next year.
  const start = `${year}-${from}`
  const end = `${to < from ? year + 1 : year}-${to}`
  return { from: start, to: dayAfter(end), label: `in ${said} ${year} (${start} to ${end})` }
}

/** The year the question names, if any, for a quarter, a month or a day in it. */
const namedYearOf = (q: string, now: Date): number | undefined =>
  /\b(?:last|previous) year\b/.test(q)
    ? now.getUTCFullYear() - 1
    : /\bthis year\b/.test(q)
    ? now.getUTCFullYear()
    : ((y) => y === undefined ? undefined : Number(y))((/\b(20\d{2}|19\d{2})\b/.exec(q) ?? [])[1])

/** The buckets of a series the question asks for ("monthly", "by quarter", "trending"). */
export const grainOf = (question: string): Grain | undefined => {
  const q = question.toLowerCase()
  if (/\b(daily|per day|by day|each day)\b/.test(q)) return "day"
  if (/\b(weekly|per week|by week|each week)\b/.test(q)) return "week"
  if (/\b(quarterly|per quarter|by quarter|each quarter)\b/.test(q)) return "quarter"
  if (/\b(yearly|per year|by year|each year|annual)\b/.test(q)) return "year"
  if (/\b(monthly|per month|by month|each month|over time|trend|trends|trending|month over month)\b/.test(q)) {
    return "month"
  }
  return undefined
}

// What joins periods compared: "Q1 vs Q2", "March compared to April"; "and" and "or" only in a
// question that says it compares ("compare H1 and H2"), else "revenue and units" would split.
const comparing = /\s+(?:vs\.?|versus|compared? (?:to|with)|against|and|or)\s+/g
const saysCompare = /\bcompar(?:e|es|ed|ing|ison)\b|\bdifference\b/
// A period said relative to the one compared with ("the one before", "the same time a year earlier").
const relative = /\b(?:before|previous|prior|earlier|preceding|same (?:period|time))\b/
// A period of a part's own, as opposed to a year it takes from the last part.
const ownPeriod = new RegExp(
  `\\b(?:q[1-4]|h[12]|(?:19|20)\\d{2}|${monthPattern}|quarter|half|week|month|year|today|yesterday)\\b`
)

/**
 * Two or more periods compared ("Q1 2025 vs Q1 2024", "January vs February 2025", "compare H1 and
 * H2 last year"), each read as "in …", a part that names no year taking the last part's: the
 * periods themselves, earliest first, and nothing between them. Undefined unless every part after
 * the first with a period names one of its own, and no two are the same.
 */
export const comparedOf = (question: string, now: Date): ReadonlyArray<Window> | Unreadable | undefined => {
  const q = question.toLowerCase()
  const parts = q.split(comparing)
  if (parts.length < 2) return undefined
  if (!saysCompare.test(q) && !/\s(?:vs\.?|versus|against)\s/.test(q)) return undefined
  const first = parts.findIndex((part) => ownPeriod.test(part))
  if (first === -1 || first === parts.length - 1) return undefined
  const year = yearWords.exec(parts.at(-1)!)?.[0]
  const periods: Array<Window> = []
  for (const part of parts.slice(first)) {
    // "Last quarter versus the one before", "the same period last year": a period said relative to
    // another, which is not read.
    if (relative.test(part)) {
      return {
        unreadable: `I could not read "${part.trim()}" as a period to compare: name each one, for example ` +
          `"revenue in Q3 2025 vs Q2 2025"`
      }
    }
    if (!ownPeriod.test(part)) return undefined
    // "January vs February 2025": January takes 2025; "last month" is already a period of its own.
    const borrows = year !== undefined && !yearWords.test(part) && !/\b(?:last|this|previous|past)\b/.test(part)
    const period = periodOf(`in ${part}${borrows ? ` ${year}` : ""}`, now)
    // Answered as the one period that reads, it would be another question.
    if (period?.from === undefined || period.to === undefined) {
      return {
        unreadable: `I could not read "${part.trim()}" as a period to compare: name each one, for example ` +
          `"revenue in Q3 2025 vs Q2 2025"`
      }
    }
    if (periods.some((p) => p.from! < period.to! && period.from! < p.to!)) {
      return {
        unreadable: `the periods compared overlap (${bare(period)}): name periods apart, for example "Q1 vs Q2 2025"`
      }
    }
    periods.push({ ...period, label: bare(period) })
  }
  return periods.sort((a, b) => (a.from! < b.from! ? -1 : 1))
}

/**
 * The period just before one, of the same length: March 2025 → February 2025, Q1 2025 → Q4 2024,
 * 2025 → 2024 (whole months shift by months); other spans shift by their days.
 */
export const previous = (period: { readonly start: string; readonly end: string }): { start: string; end: string } => {
  const [sy, sm, sd] = period.start.split("-").map(Number) as [number, number, number]
  const [ey, em, ed] = period.end.split("-").map(Number) as [number, number, number]
  if (sd === 1 && ed === 1) {
    const months = (ey - sy) * 12 + (em - sm)
    return { start: isoDate(new Date(Date.UTC(sy, sm - 1 - months, 1))), end: period.start }
  }
  const days = Math.round((Date.UTC(ey, em - 1, ed) - Date.UTC(sy, sm - 1, sd)) / 86_400_000)
  return { start: isoDate(new Date(Date.UTC(sy, sm - 1, sd - days))), end: period.start }
}

/**
 * Whole years in a row, compared ("2024 vs 2025"), read as one series by year over them, as a
 * question that names them reads; undefined for other periods, which are read as themselves.
 */
export const yearSeries = (periods: ReadonlyArray<Window>): Window | undefined =>
  periods.every((p, i) =>
      p.from !== undefined && p.to !== undefined && p.from.endsWith("-01-01") && p.to.endsWith("-01-01") &&
      Number(p.to.slice(0, 4)) === Number(p.from.slice(0, 4)) + 1 && (i === 0 || periods[i - 1]!.to === p.from)
    )
    ? {
      from: periods[0]!.from,
      to: periods.at(-1)!.to,
      label: `from ${periods[0]!.from!.slice(0, 4)} to ${periods.at(-1)!.from!.slice(0, 4)}`
    }
    : undefined

/** Two or more years named ("2024 vs 2025"): the window from the first to the last, compared by year. */
export const yearsOf = (question: string): Window | undefined => {
  const years = [...new Set([...question.matchAll(/\b(20\d{2}|19\d{2})\b/g)].map((m) => Number(m[1])))].sort()
  return years.length < 2
    ? undefined
    : { from: `${years[0]}-01-01`, to: `${years.at(-1)! + 1}-01-01`, label: `from ${years[0]} to ${years.at(-1)}` }
}

/** Words of periods, which a question may capitalize ("Q3", "March") and which name no table or column. */
export const periodWords = new Set([
  ...monthNames,
  ...monthNames.map((month) => month.slice(0, 3)),
  "sept",
  "q1",
  "q2",
  "q3",
  "q4",
  "h1",
  "h2",
  "ytd",
  "mtd",
  "daily",
  "weekly",
  "monthly",
  "quarterly",
  "yearly",
  "annual",
  // "In the first quarter", "in the past year": a period's, not a name.
  ...Object.keys(ordinals),
  "past",
  "previous",
  "current"
])
