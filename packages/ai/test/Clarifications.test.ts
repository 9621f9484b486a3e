import { describe, expect, it } from "@effect/vitest"
import * as SemanticModel from "@sightline/core/SemanticModel"
import * as Either from "effect/Either"
import * as Reader from "../src/internal/reader.js"
import { now, semantic } from "./utils/shop.js"

/** The reading once the data answered the lookups: `data` holds, per word, each dimension's values that hold it. */
const readFinding = (
  question: string,
  data: Record<string, Record<string, ReadonlyArray<string>>> = {},
  contexts: ReadonlyArray<typeof semantic[number]> = semantic,
  conversation?: Reader.Conversation
) => {
  const found: Array<Reader.Found> = []
  for (;;) {
    const result = Reader.read(question, contexts, now, found, conversation)
    if (result === undefined || !("lookup" in result)) return { result, found }
    for (const search of result.lookup) found.push({ ...search, values: data[search.word]?.[search.dimension] ?? [] })
  }
}

// A model where "web" is a value of two dimensions, and "prise" is one letter from two metrics.
const twoWebs = SemanticModel.parse(
  "semantic/webs.yaml",
  `name: webs
tables:
  - name: orders
    base_table: { table: orders }
    primary_key: { columns: [id] }
    dimensions:
      - name: channel
        values: [{ value: web }, { value: store }]
      - name: source
        values: [{ value: web }, { value: referral }]
    time_dimensions:
      - { name: order_date, expr: ordered_at, data_type: TIMESTAMP_TZ }
    measures:
      - { name: revenue, agg: sum, expr: amount }
      - { name: price, agg: avg, expr: price }
      - { name: prize, agg: sum, expr: prize_money }
`
)
if (Either.isLeft(twoWebs)) throw new Error(twoWebs.left.map(SemanticModel.formatProblem).join("\n"))
const webs = [{ connector_id: 3, model: twoWebs.right.file, reviewed: true }]

describe("Clarifications", () => {
  it("asks which of the names that share a word is meant, each choice a question that reads", () => {
    const data = { okafor: { customer: ["Priya Okafor", "Sam Okafor"] } }
    const { found, result } = readFinding("Orders from Okafor last year?", data)
    expect(result).toEqual({
      clarify: {
        question: "Which \"okafor\" do you mean?",
        choices: [
          { label: "Priya Okafor", question: "Orders from Priya Okafor last year?" },
          { label: "Sam Okafor", question: "Orders from Sam Okafor last year?" }
        ],
        declined: "\"okafor\" is part of \"Priya Okafor\" or \"Sam Okafor\": say which"
      }
    })
    // A choice is a complete question: it reads as that customer, with the period kept.
    if (result === undefined || !("clarify" in result)) throw new Error("no clarification")
    expect(Reader.read(result.clarify.choices[1]!.question, semantic, now, found)).toMatchObject({
      query: {
        metrics: ["orders"],
        time: { start: "2025-01-01", end: "2026-01-01" },
        filters: [{ dimension: "customer", values: ["Sam Okafor"] }]
      }
    })
  })

  it("asks which meaning a word that names two values has, and reads the one said with its dimension", () => {
    const { result } = readFinding("revenue from web last year", {}, webs)
    expect(result).toMatchObject({
      clarify: {
        question: "What do you mean by \"web\"?",
        choices: [
          { label: "web channel", question: "revenue from web channel last year" },
          { label: "web source", question: "revenue from web source last year" }
        ]
      }
    })
    expect(readFinding("revenue from web source last year", {}, webs).result).toMatchObject({
      query: { metrics: ["revenue"], filters: [{ dimension: "source", operator: "=", values: ["web"] }] }
    })
  })

  it("asks which known word a misspelling as near to several stands for", () => {
    const { result } = readFinding("prise by channel", {}, webs)
    expect(result).toMatchObject({
      clarify: {
        question: "What did you mean by \"prise\"?",
        choices: [
          { label: "price", question: "price by channel" },
          { label: "prize", question: "prize by channel" }
        ]
      }
    })
    // One letter from one word only is read as it, and said.
    expect(readFinding("pricce by channel", {}, webs).result).toMatchObject({
      query: { metrics: ["price"], dimensions: ["channel"] },
      corrections: [["pricce", "price"]]
    })
  })

  it("asks which row \"it\" is after an answer of several, each choice following on from that answer", () => {
    const top = "top 3 customers by revenue last year"
    const conversation = {
      questions: [top],
      answers: [{
        question: top,
        columns: ["customer", "customer_number", "revenue"],
        rows: [["Priya Okafor", 1042, 900], ["Ann Lee", 7, 800], ["Bo Chen", 12, 700]],
        row_count: 3
      }]
    }
    const { result } = readFinding("how many orders did it place?", {}, semantic, conversation)
    expect(result).toMatchObject({
      clarify: {
        question: "Which customer do you mean by \"it\"?",
        choices: [
          { label: "Priya Okafor", question: "how many orders did the first one place?" },
          { label: "Ann Lee", question: "how many orders did the second one place?" },
          { label: "Bo Chen", question: "how many orders did the third one place?" }
        ]
      }
    })
    expect(Reader.read("how many orders did the second one place?", semantic, now, [], conversation)).toMatchObject({
      query: {
        metrics: ["orders"],
        time: { start: "2025-01-01", end: "2026-01-01" },
        filters: [{ dimension: "customer", values: ["Ann Lee"] }, { dimension: "customer_number", values: ["7"] }]
      }
    })
  })

  it("reads a full name held by one customer, even when more than a lookup's worth share its surname", () => {
    // The surname alone finds the first 20 of many Okafors, without Priya; all the name's words find her.
    const others = Array.from({ length: 20 }, (_, i) => `Customer${i} Okafor`)
    const found: Array<Reader.Found> = []
    let result = Reader.read("revenue from priya okafor last year", semantic, now, found)
    while (result !== undefined && "lookup" in result) {
      for (const search of result.lookup) {
        const values = search.with === undefined ?
          others :
          [...others, "Priya Okafor"].filter((v) => search.with!.every((word) => v.toLowerCase().includes(word)))
        found.push({ ...search, values })
      }
      result = Reader.read("revenue from priya okafor last year", semantic, now, found)
    }
    expect(result).toMatchObject({
      query: { metrics: ["revenue"], filters: [{ dimension: "customer", operator: "=", values: ["Priya Okafor"] }] },
      named: { value: "Priya Okafor" }
    })
  })

  it("asks which day a date written in an order that differs by country is, and reads one that can only be one", () => {
    expect(Reader.read("revenue on 12/11/2025", semantic, now)).toEqual({
      clarify: {
        question: `Which day do you mean by "12/11/2025"?`,
        choices: [
          { label: "11 December 2025", question: "revenue on 2025-12-11" },
          { label: "12 November 2025", question: "revenue on 2025-11-12" }
        ],
        declined: expect.stringContaining("whose order differs by country")
      }
    })
    // The 25th month is no month: the 25th of December.
    expect(Reader.read("orders on 25/12/2025", semantic, now)).toMatchObject({
      query: { metrics: ["orders"], time: { start: "2025-12-25", end: "2025-12-26" } }
    })
    expect(Reader.read("revenue on 31/02/2025", semantic, now)).toMatchObject({
      declined: expect.stringContaining("not in the calendar")
    })
  })

  it("declines as before when there are no candidates, or when fewer than two choices read", () => {
    expect(readFinding("revenue from atlantis").result).toEqual({
      declined: expect.stringMatching(/"atlantis" picks out/)
    })
    // One value holding the word is that value, not a question.
    expect(readFinding("orders from priya", { priya: { customer: ["Priya Okafor"] } }).result).toMatchObject({
      query: { filters: [{ values: ["Priya Okafor"] }] }
    })
  })
})
