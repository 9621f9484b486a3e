import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Reader from "../src/internal/reader.js"
import * as Directives from "../src/internal/reader/directives.js"
import * as Measure from "../src/internal/reader/measure.js"
import * as Period from "../src/internal/reader/period.js"
import * as Phrases from "../src/internal/reader/phrases.js"
import * as Query from "../src/internal/reader/query.js"
import * as Reading from "../src/internal/reader/reading.js"
import * as Roles from "../src/internal/reader/roles.js"
import * as Shape from "../src/internal/reader/shape.js"
import * as Words from "../src/internal/reader/words.js"
import * as Vocabulary from "../src/internal/vocabulary.js"
import { now, semantic } from "./utils/shop.js"

// Each phase is read alone: the stages before it are built by the phases before it, and the
// phase's own output is what is asserted.
const vocabulary = Vocabulary.of(semantic[0]!.model, false)
const question = (text: string, found: ReadonlyArray<Reading.Found> = []) =>
  Reading.question(Words.normalize(text), vocabulary, 7, now, found)
const go = <A extends object>(step: A | Reading.Stop): A => {
  if (Reading.isStop(step)) throw new Error(`stopped: ${JSON.stringify(step)}`)
  return step as A
}
const phrased = (text: string) => go(Phrases.read(question(text)))
const dated = (text: string) => go(Period.read(phrased(text)))
const shaped = (text: string) => go(Shape.read(dated(text)))
const roled = (text: string) => go(Roles.read(shaped(text)))
const measured = (text: string) => go(Measure.read(roled(text)))
const words = (stage: Reading.Question) => [...stage.covered].sort((a, b) => a - b).map((i) => stage.tokens[i]!.word)

describe("the reader's phases", () => {
  it("phrases: matches the model's phrases, corrects a misspelt word, and finds a metric named by words apart", () => {
    const stage = phrased("top 5 customers by reveune")
    expect(stage.matches.map((m) => m.terms[0]!.said)).toEqual(["customer", "revenue"])
    expect(stage.corrections).toEqual([["reveune", "revenue"]])
    expect(words(stage)).toEqual(["customers", "reveune"])
    const apart = phrased("how many orders were cancelled")
    expect(apart.specific.map((t) => t.target.kind === "metric" ? t.target.name : "")).toEqual(["cancelled_orders"])
    expect(words(apart)).toEqual(expect.arrayContaining(["orders", "cancelled"]))
    // Only the phrases: no filler is accounted for yet.
    expect(words(apart)).not.toContain("how")
  })

  it("period: reads the window and the grain, accounts for their words, and declines a period not begun", () => {
    const stage = dated("monthly revenue last year")
    expect(stage.window).toMatchObject({ from: "2025-01-01", to: "2026-01-01" })
    expect(stage.grain).toBe("month")
    expect(words(stage)).toEqual(["monthly", "revenue", "last", "year"])
    expect(dated("revenue").covered).toEqual(phrased("revenue").covered)
    expect(Period.read(phrased("revenue in 2027"))).toMatchObject({
      declined: { declined: expect.stringContaining("has not begun") }
    })
  })

  it("shape: reads the count, the order and a list, and stops at a word no phase placed", () => {
    expect(shaped("top 5 customers by revenue")).toMatchObject({ limit: 5, direction: "desc", asList: false })
    expect(shaped("which customers have the lowest revenue")).toMatchObject({ limit: undefined, direction: "asc" })
    expect(shaped("list the regions")).toMatchObject({ asList: true })
    // One thing ranked first in the singular is the first row; a plural, or "the most", the ranking.
    expect(shaped("our biggest customer last year")).toMatchObject({ limit: 1, direction: "desc" })
    expect(shaped("our biggest customers last year")).toMatchObject({ limit: undefined })
    expect(shaped("which customer has the most revenue")).toMatchObject({ limit: undefined })
    // "Lowest first" is an order.
    expect(shaped("revenue by region lowest first")).toMatchObject({ direction: "asc", limit: undefined })
    // An unknown word is looked up in the data first, then declined by name.
    const lookup = Shape.read(dated("revenue by planet"))
    expect(lookup).toEqual({
      lookup: vocabulary.searchable.map((dimension) => ({ connectorId: 7, word: "planet", dimension }))
    })
    const found = vocabulary.searchable.map((dimension) => ({ connectorId: 7, word: "planet", dimension, values: [] }))
    expect(Shape.read(go(Period.read(go(Phrases.read(question("revenue by planet", found))))))).toMatchObject({
      declined: { declined: expect.stringContaining(`"planet"`) },
      unknown: 1
    })
  })

  it("roles: tells a grouping from a filter, and the specific metric from the broad one", () => {
    expect(roled("revenue by region in Europe")).toMatchObject({
      metrics: ["revenue"],
      dimensions: ["region"],
      filters: new Map([["region", ["Europe"]]])
    })
    const apart = roled("how many orders were cancelled")
    expect(apart.metrics).toEqual(["cancelled_orders"])
    expect([...apart.filters.keys()]).toEqual([])
    expect(Roles.read(shaped("revenue per orders"))).toMatchObject({
      declined: { declined: expect.stringContaining("no dimension for") }
    })
  })

  it("measure: takes a measure from a verb or a ranking, and declines what one query cannot give", () => {
    expect(measured("what did Europe spend").metrics).toEqual(["revenue"])
    expect(measured("our biggest customers")).toMatchObject({ metrics: ["revenue"], assumed: "revenue" })
    expect(measured("list the regions")).toMatchObject({ metrics: [], list: true })
    expect(Measure.read(roled("top 2 customers per region"))).toMatchObject({
      dimensions: ["region", "customer"],
      per: { dimension: "region", limit: 2 },
      limit: undefined
    })
  })

  it("query: compares values, splits a name by what tells its rows apart, and orders a ranking", () => {
    expect(Query.read(measured("web vs store revenue")).query).toEqual({
      metrics: ["revenue"],
      dimensions: ["channel"],
      filters: [{ dimension: "channel", operator: "in", values: ["web", "store"] }]
    })
    expect(Query.read(measured("top 3 customers by orders"))).toMatchObject({
      query: {
        metrics: ["orders"],
        dimensions: ["customer", "customer_number"],
        order: [{ by: "orders", direction: "desc" }],
        limit: 3
      },
      identifiers: ["customer_number"]
    })
  })
})

describe("instructions about the answer", () => {
  it("are taken out of the question, in the order written, and the rest is read", () => {
    expect(Directives.split("Top 5 products by revenue last year. Write a short report with a chart.")).toEqual({
      question: "Top 5 products by revenue last year.",
      directives: ["Write a short report", "with a chart"]
    })
    expect(Directives.split("Summarise weekly orders in bullet points, and e-mail it to the team")).toEqual({
      question: "weekly orders",
      directives: ["Summarise", "in bullet points", "and e-mail it to the team"]
    })
    expect(Directives.split("Give me a quick summary of revenue by region as a table").question).toBe(
      "revenue by region"
    )
    // Words of content stay: a verb of money, a list, a dimension that happens to be called "table".
    for (const question of ["what did we make last year", "list the regions", "orders by customer and table"]) {
      expect(Directives.split(question)).toEqual({ question, directives: [] })
    }
  })

  it("never decline a question, and the reading says it took them as instructions", () => {
    const read = Reader.read("Revenue by region last year. Write a short report with a chart.", semantic, now)
    expect(read).toMatchObject({
      query: { metrics: ["revenue"], dimensions: ["region"], time: { start: "2025-01-01", end: "2026-01-01" } },
      directives: ["Write a short report", "with a chart"]
    })
    expect(Reader.read("Revenue by region last year", semantic, now)).not.toHaveProperty("directives")
    // Instructions alone ask for nothing to measure, and say so.
    expect(Reader.read("Write the weekly report", semantic, now)).toMatchObject({
      declined: expect.stringContaining("I could not tell what to measure")
    })
  })
})

describe("follow-ups", () => {
  const conversation = (...questions: ReadonlyArray<string>) =>
    questions.map((question, i) =>
      Reader.read(question, semantic, now, [], { questions: questions.slice(0, i), answers: [] })
    )

  it("merge a fragment with the reading before it, and say what they kept and changed", () => {
    const [, perChannel, stores, top] = conversation(
      "revenue by region last year",
      "and per channel?",
      "just the stores",
      "top 3"
    )
    expect(perChannel).toMatchObject({
      query: { metrics: ["revenue"], dimensions: ["channel"], time: { start: "2025-01-01", end: "2026-01-01" } },
      followed: { question: "revenue by region last year", kept: ["revenue", "2025"], changed: ["by channel"] }
    })
    expect(stores).toMatchObject({
      query: { dimensions: ["channel"], filters: [{ dimension: "channel", operator: "=", values: ["store"] }] },
      followed: { kept: ["revenue", "by channel", "2025"], changed: ["channel store"] }
    })
    expect(top).toMatchObject({
      query: { metrics: ["revenue"], order: [{ by: "revenue", direction: "desc" }], limit: 3 },
      followed: { changed: ["the top 3"] }
    })
    // "Too" adds a breakdown; "instead" with a grain takes the breakdown's place.
    expect(conversation("revenue by region last year", "by channel too")[1]).toMatchObject({
      query: { dimensions: ["region", "channel"] }
    })
    const [, , quarterly] = conversation("revenue by region last year", "what about orders?", "by quarter instead")
    expect(quarterly).toMatchObject({ query: { metrics: ["orders"], time: { grain: "quarter" } } })
    expect(quarterly).not.toHaveProperty("query.dimensions")
  })

  it("never carry anything into a complete question, and decline a fragment of an answer that was not read", () => {
    const [, fresh] = conversation("revenue by region in Europe last year", "orders by channel")
    expect(fresh).toEqual({ connectorId: 7, query: { metrics: ["orders"], dimensions: ["channel"] }, corrections: [] })
    expect(conversation("why did revenue drop", "and per channel?")[1]).toEqual({
      declined: expect.stringContaining("follows on from an earlier question that I could not read")
    })
    // Without a conversation, the small words of one are words it cannot place: looked up in the data.
    expect(Reader.read("and per channel instead", semantic, now)).toMatchObject({
      lookup: [expect.objectContaining({ word: "instead" })]
    })
  })

  it("read \"the second one\" and \"it\" as rows of the answer before, naming the value they took", () => {
    const top = "top 3 customers by revenue last year"
    const answers = [{
      question: top,
      columns: ["customer", "customer_number", "revenue"],
      rows: [["Priya Okafor", 1042, 900], ["Ann Lee", 7, 800], ["Bo Chen", 12, 700]],
      row_count: 3
    }]
    const second = Reader.read("split the second one by channel", semantic, now, [], { questions: [top], answers })
    expect(second).toMatchObject({
      query: {
        metrics: ["revenue"],
        dimensions: ["channel"],
        time: { start: "2025-01-01", end: "2026-01-01" },
        filters: [
          { dimension: "customer", operator: "=", values: ["Ann Lee"] },
          { dimension: "customer_number", operator: "=", values: ["7"] }
        ]
      },
      corrections: [["second one", "Ann Lee"]]
    })
    // The ranking picked the row; it ranks nothing now.
    expect(second).not.toHaveProperty("query.limit")
    expect(second).not.toHaveProperty("query.order")
    // "It" after three rows could be any of them: which one is asked (Clarifications.test.ts).
    expect(Reader.read("how many orders did it place?", semantic, now, [], { questions: [top], answers }))
      .toMatchObject({
        clarify: { declined: expect.stringContaining(`"it" could be any of the 3 rows of the last answer`) }
      })
    // After one row, "it" is that row, and the question follows on even though it names its measure.
    const one = [{ ...answers[0]!, rows: answers[0]!.rows.slice(0, 1), row_count: 1 }]
    expect(Reader.read("how many orders did it place?", semantic, now, [], { questions: [top], answers: one }))
      .toMatchObject({
        query: {
          metrics: ["orders"],
          time: { start: "2025-01-01", end: "2026-01-01" },
          filters: [{ dimension: "customer", values: ["Priya Okafor"] }, { dimension: "customer_number" }]
        },
        corrections: [["it", "Priya Okafor"]]
      })
  })

  // Reading Q and then a fragment F gives the query that Q with F written into it gives.
  const metric = FastCheck.constantFrom("revenue", "orders")
  const dimension = FastCheck.constantFrom("channel", "region")
  const period = FastCheck.constantFrom("last year", "in 2024", "last month")
  const value = FastCheck.constantFrom("online", "Europe", "APAC")
  const fragment = FastCheck.oneof(
    FastCheck.record({ kind: FastCheck.constant("breakdown" as const), to: dimension }),
    FastCheck.record({ kind: FastCheck.constant("measure" as const), to: metric }),
    FastCheck.record({ kind: FastCheck.constant("period" as const), to: period }),
    FastCheck.record({ kind: FastCheck.constant("filter" as const), to: value }),
    FastCheck.record({ kind: FastCheck.constant("top" as const), to: FastCheck.integer({ min: 2, max: 9 }) }),
    FastCheck.record({ kind: FastCheck.constant("compare" as const), to: FastCheck.constantFrom("2024", "q1 2025") })
  )
  it.prop(
    "a fragment read after a question reads as the question with the fragment written in",
    [metric, dimension, period, fragment],
    ([m, d, p, f]) => {
      const question = `${m} by ${d} ${p}`
      const [said, full] = f.kind === "breakdown"
        ? [`and per ${f.to}?`, `${m} by ${f.to} ${p}`]
        : f.kind === "measure"
        ? [`what about ${f.to}?`, `${f.to} by ${d} ${p}`]
        : f.kind === "period"
        ? [`same for ${f.to}`, `${m} by ${d} ${f.to}`]
        : f.kind === "filter"
        ? [`just ${f.to}`, `${m} by ${d} ${p} for ${f.to}`]
        : f.kind === "top"
        ? [`top ${f.to}`, `top ${f.to} ${d} by ${m} ${p}`]
        // "Vs 2024": the period before compared with the one named.
        : [`vs ${f.to}`, `${m} by ${d} ${p} vs ${f.to}`]
      // Periods that overlap are no comparison: written in full it is declined, as a fragment the
      // period it names replaces the one before, which the answer says.
      if (f.kind === "compare" && (p === "in 2024" ? f.to === "2024" : p === "last year" && f.to === "q1 2025")) return
      const followed = Reader.read(said, semantic, now, [], { questions: [question], answers: [] })
      const written = Reader.read(full, semantic, now)
      expect(written).toHaveProperty("query")
      expect(followed).toHaveProperty("query", (written as Reader.Read).query)
    }
  )
})

describe("words", () => {
  const queryOf = (question: string) => (Reader.read(question, semantic, now) as Reader.Read).query
  it("spells out contractions and short forms, and places the words that mean a count is distinct", () => {
    expect(Words.normalize("They're what's haven't won't CNT")).toBe("they are what have not will not count")
    expect(queryOf("what's the cnt of orders by channel")).toEqual({ metrics: ["orders"], dimensions: ["channel"] })
    expect(queryOf("how many orders have we handled altogether")).toEqual({ metrics: ["orders"] })
    expect(queryOf("how many different orders last year")).toMatchObject({ metrics: ["orders"] })
    // "Not" is read as a word to place, never skipped: it would answer the opposite question.
    expect(Reader.read("which regions haven't had orders", semantic, now)).toMatchObject({
      lookup: [expect.objectContaining({ word: "not" })]
    })
    // A verb of money asks for money, even where the words would list the regions.
    expect(queryOf("what they're spending by region")).toEqual({ metrics: ["revenue"], dimensions: ["region"] })
  })

  it("reads a range between two periods", () => {
    expect(queryOf("revenue between march and may last year")).toEqual({
      metrics: ["revenue"],
      time: { start: "2025-03-01", end: "2025-06-01" }
    })
  })
})
