import { describe, expect, it } from "@effect/vitest"
import * as Periods from "../src/internal/periods.js"

// Monday 23 November 2026.
const now = new Date(Date.UTC(2026, 10, 23))
/** The window a question names, at `now`. */
const window = (question: string) => Periods.windowOf(question, now)
/** Why a question's period cannot be read. */
const unreadable = (question: string): string => {
  const found = Periods.yearsOf(question.toLowerCase()) ?? window(question.toLowerCase())
  return found !== undefined && "unreadable" in found ? found.unreadable : `read: ${JSON.stringify(found)}`
}

describe("Periods", () => {
  it("reads quarters, halves, months and weeks, and a month without a year is the latest begun", () => {
    expect(window("What was revenue in Q3 2025?")).toEqual({
      from: "2025-07-01",
      to: "2025-10-01",
      label: "in Q3 2025"
    })
    expect(window("revenue in the third quarter of last year")).toMatchObject({ from: "2025-07-01", to: "2025-10-01" })
    expect(window("orders last quarter")).toEqual({ from: "2026-07-01", to: "2026-10-01", label: "in Q3 2026" })
    expect(window("orders this quarter")).toMatchObject({ label: "in Q4 2026 so far" })
    expect(window("revenue in H1 2025")).toMatchObject({ from: "2025-01-01", to: "2025-07-01" })
    expect(window("revenue in March 2025")).toEqual({ from: "2025-03-01", to: "2025-04-01", label: "in March 2025" })
    // Now is November 2026: March has begun this year, December has not.
    expect(window("revenue in March")).toMatchObject({ from: "2026-03-01" })
    expect(window("revenue in December")).toMatchObject({ from: "2025-12-01", to: "2026-01-01" })
    // "Last <month>" is the latest that has ended (this November has not), "this <month>" this year's.
    expect(window("Orders per day last December")).toEqual({
      from: "2025-12-01",
      to: "2026-01-01",
      label: "in December 2025"
    })
    expect(window("revenue last March")).toMatchObject({ from: "2026-03-01", to: "2026-04-01" })
    expect(window("revenue last November")).toMatchObject({ from: "2025-11-01", to: "2025-12-01" })
    expect(window("orders this March")).toMatchObject({ from: "2026-03-01", to: "2026-04-01" })
    expect(window("orders last month")).toEqual({ from: "2026-10-01", to: "2026-11-01", label: "in October 2026" })
    expect(Periods.windowOf("orders last month", new Date(Date.UTC(2026, 0, 10)))).toMatchObject({
      label: "in December 2025"
    })
    // Weeks start on Monday: now (Monday 23 November) is in the week of the 23rd.
    expect(window("orders last week")).toMatchObject({ from: "2026-11-16", to: "2026-11-23" })
    // A day, in any of its usual spellings; without a year, the latest that has begun.
    for (
      const day of ["on 2025-12-24", "on December 24, 2025", "on 24 December 2025", "on the 24th of December 2025"]
    ) {
      expect(window(`revenue ${day}`)).toEqual({ from: "2025-12-24", to: "2025-12-25", label: "on 2025-12-24" })
    }
    expect(window("orders on December 24")).toMatchObject({ from: "2025-12-24" })
    expect(window("orders on November 2")).toMatchObject({ from: "2026-11-02" })
    expect(window("orders on February 29")).toMatchObject({ from: "2024-02-29" })
    // The last quarter (half, month) of a year is its last, not the one before this.
    expect(window("orders in each region in the last quarter of 2025")).toEqual({
      from: "2025-10-01",
      to: "2026-01-01",
      label: "in Q4 2025"
    })
    expect(window("revenue in the final month of last year")).toMatchObject({
      from: "2025-12-01",
      label: "in December 2025"
    })
    expect(window("revenue in the last half of 2024")).toMatchObject({ from: "2024-07-01", to: "2025-01-01" })
    expect(window("orders last quarter")).toMatchObject({ label: "in Q3 2026" })
    // A ranking's number before a month is no day.
    expect(window("the top 5 June 2025 products")).toMatchObject({ from: "2025-06-01", to: "2025-07-01" })
    expect(window("revenue since December 1, 2025")).toEqual({
      from: "2025-12-01",
      to: "2026-11-24",
      label: "since 2025-12-01"
    })
    expect(window("orders on February 30, 2025")).toEqual({
      unreadable: expect.stringContaining("not in the calendar")
    })
    expect(window("orders on 12/24/2025")).toEqual({ unreadable: expect.stringContaining("whose order differs") })
    // A month and its year are no day.
    expect(window("revenue in December 2025")).toMatchObject({ from: "2025-12-01", to: "2026-01-01" })
    expect(window("may I see the revenue")).toBeUndefined()
    // Rolling windows end with today (the 23rd).
    expect(window("sales today")).toEqual({ from: "2026-11-23", to: "2026-11-24", label: "today" })
    expect(window("What were total sales yesterday?")).toMatchObject({ from: "2026-11-22", to: "2026-11-23" })
    expect(window("Sales in the past 7 days")).toEqual({
      from: "2026-11-17",
      to: "2026-11-24",
      label: "in the last 7 days"
    })
    expect(window("orders in the last 2 weeks")).toMatchObject({ from: "2026-11-10", to: "2026-11-24" })
    expect(window("revenue over the past 3 months")).toMatchObject({ from: "2026-08-24", to: "2026-11-24" })
    expect(window("revenue in the past year")).toMatchObject({ from: "2025-11-24", label: "in the last year" })
  })

  it("reads a range that starts or ends with a period, or runs between two", () => {
    expect(window("Revenue since March 2025")).toEqual({
      from: "2025-03-01",
      to: "2026-11-24",
      label: "since March 2025"
    })
    expect(window("orders after 2024")).toEqual({ from: "2025-01-01", to: "2026-11-24", label: "after 2024" })
    expect(window("Total revenue before 2025")).toEqual({ to: "2025-01-01", label: "before 2025" })
    expect(window("revenue until Q2 2025")).toEqual({ to: "2025-07-01", label: "until the end of Q2 2025" })
    // An edge the question names wins over the word's own.
    expect(window("revenue before the end of 2025")).toEqual({ to: "2026-01-01", label: "before the end of 2025" })
    expect(window("orders since the start of Q3 2025")).toMatchObject({ from: "2025-07-01" })
    expect(window("orders after the start of 2025")).toMatchObject({ from: "2025-01-01" })
    // A range word before no period is no range.
    expect(window("orders through the web channel in 2025")).toMatchObject({ from: "2025-01-01", to: "2026-01-01" })
    expect(window("revenue after returns")).toBeUndefined()
    expect(window("revenue from web and store in 2025")).toMatchObject({ from: "2025-01-01", to: "2026-01-01" })
    // An open side has no condition.
    // A range between two periods runs from the first's start to the second's end, the first in the
    // second's year when it names none.
    expect(window("Revenue between January and March 2025")).toEqual({
      from: "2025-01-01",
      to: "2025-04-01",
      label: "from January 2025 to March 2025"
    })
    expect(window("Revenue from 2024-03-05 to 2024-03-09")).toMatchObject({ from: "2024-03-05", to: "2024-03-10" })
    expect(unreadable("Revenue between May and March 2025")).toContain("starts (May 2025) after it ends (March 2025)")
    expect(unreadable("Revenue in 2025 before March")).toContain("one period at a time")
    expect(unreadable("Revenue for Q4 vs Q3 2025")).toContain("two to compare")
  })

  it("reads periods compared as those periods, earliest first, a part with no year taking the last's", () => {
    const compared = (question: string) => Periods.comparedOf(question, now)
    expect(compared("revenue for Q4 vs Q3 2025")).toEqual([
      { from: "2025-07-01", to: "2025-10-01", label: "Q3 2025" },
      { from: "2025-10-01", to: "2026-01-01", label: "Q4 2025" }
    ])
    expect(compared("march 2025 vs march 2024 revenue")).toMatchObject([
      { from: "2024-03-01", to: "2024-04-01" },
      { from: "2025-03-01", to: "2025-04-01" }
    ])
    expect(compared("how did q4 compare to q3 last year")).toMatchObject([{ label: "Q3 2025" }, { label: "Q4 2025" }])
    expect(compared("compare revenue in H1 and H2 2025")).toMatchObject([{ label: "H1 2025" }, { label: "H2 2025" }])
    expect(compared("revenue in january vs february vs march 2025")).toHaveLength(3)
    // "And" joins periods only in a question that says it compares; what has no period is no comparison.
    expect(compared("revenue and units in Q1 2025")).toBeUndefined()
    expect(compared("web vs store revenue in 2025")).toBeUndefined()
    // A part that names a period it cannot read, or periods that overlap, is said, not half-read.
    expect(compared("revenue last quarter versus the quarter before")).toMatchObject({
      unreadable: expect.stringContaining(`"the quarter before"`)
    })
    expect(compared("revenue in 2025 vs Q1 2025")).toMatchObject({ unreadable: expect.stringContaining("overlap") })
    expect(compared("revenue last quarter versus the one before")).toMatchObject({
      unreadable: expect.stringContaining(`"the one before"`)
    })
    expect(compared("revenue in 2025 for web vs store")).toBeUndefined()
    // Part of a period was answered for all of it; its word is no name either ("late", "mid-").
    for (const part of ["How many orders in late 2025?", "Revenue in mid-2025", "Orders since early 2025"]) {
      expect(unreadable(part)).toContain("not the early, middle or late part of one")
    }
    expect(unreadable("Revenue at the end of last year")).toContain("late part of one")
    // So were some weeks or days of one; the last month of a year is its December.
    for (
      const part of [
        "What was revenue in the first week of 2025?",
        "Orders in the first 10 days of March 2025",
        "Revenue in the last two weeks of 2025",
        "Sales in the first month of 2025"
      ]
    ) {
      expect(unreadable(part)).toContain("not some weeks or days of one")
    }
    expect(window("revenue in the last month of 2025")).toMatchObject({ from: "2025-12-01", to: "2026-01-01" })
    // A period's ordinal is no name.
    expect(window("revenue until the end of 2024")).toEqual({ to: "2025-01-01", label: "until the end of 2024" })
  })
})
