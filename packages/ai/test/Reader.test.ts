import { describe, expect, it } from "@effect/vitest"
import * as Reader from "../src/internal/reader.js"
import { now, semantic } from "./utils/shop.js"

/**
 * The reading of a question once the data answered its lookups: `data` holds, for a word, the
 * values of each dimension that hold it (nothing anywhere unless it says).
 */
const readFinding = (
  question: string,
  data: Record<string, Record<string, ReadonlyArray<string>>> = {},
  contexts: ReadonlyArray<typeof semantic[number]> = semantic
) => {
  const found: Array<Reader.Found> = []
  for (;;) {
    const result = Reader.read(question, contexts, now, found)
    if (result === undefined || !("lookup" in result)) return result
    for (const search of result.lookup) found.push({ ...search, values: data[search.word]?.[search.dimension] ?? [] })
  }
}
const read = (question: string) => readFinding(question)
const queryOf = (question: string) => {
  const result = read(question)
  if (result === undefined || !("query" in result)) throw new Error(`not read: ${question}: ${JSON.stringify(result)}`)
  return result.query
}

describe("Reader", () => {
  it("reads measures, groups, periods and rankings, with short forms and a misspelt word", () => {
    expect(queryOf("top 5 customers by rev last yr")).toEqual({
      metrics: ["revenue"],
      dimensions: ["customer", "customer_number"],
      time: { start: "2025-01-01", end: "2026-01-01" },
      order: [{ by: "revenue", direction: "desc" }],
      limit: 5
    })
    expect(queryOf("monthly reveune in APAC")).toEqual({
      metrics: ["revenue"],
      time: { grain: "month" },
      filters: [{ dimension: "region", operator: "=", values: ["Asia Pacific"] }]
    })
    expect(read("monthly reveune in APAC")).toMatchObject({ corrections: [["reveune", "revenue"]] })
    expect(queryOf("which month had the most orders in 2025")).toMatchObject({
      metrics: ["orders"],
      time: { grain: "month", start: "2025-01-01", end: "2026-01-01" },
      order: [{ by: "orders", direction: "desc" }]
    })
  })

  it("compares two values of a dimension as a comparison, never one total", () => {
    for (const question of ["online vs in store sales", "did web or store make more money"]) {
      expect(queryOf(question)).toMatchObject({
        metrics: ["revenue"],
        dimensions: ["channel"],
        filters: [{ dimension: "channel", operator: "in", values: ["web", "store"] }]
      })
    }
  })

  it("takes the most specific metric the words name", () => {
    expect(queryOf("how many orders were cancelled in 2025")).toEqual({
      metrics: ["cancelled_orders"],
      time: { start: "2025-01-01", end: "2026-01-01" }
    })
  })

  it("accounts for every word: an unknown qualifier declines, naming it, wherever it goes", () => {
    const answerable = [
      "revenue by channel last year",
      "top 5 customers by revenue",
      "orders in europe in 2025",
      "monthly sales online"
    ]
    for (const question of answerable) {
      expect(read(question)).not.toHaveProperty("declined")
      const words = question.split(" ")
      for (let at = 0; at <= words.length; at++) {
        const qualified = [...words.slice(0, at), "wholesale", ...words.slice(at)].join(" ")
        const result = read(qualified)
        expect(result).toMatchObject({ declined: expect.stringContaining("\"wholesale\"") })
      }
    }
  })

  it("declines causes, forecasts and intersections with their reason, whatever the words", () => {
    expect(read("why did revenue drop in march")).toMatchObject({ declined: expect.stringContaining("cause") })
    expect(read("forecast revenue for next year")).toMatchObject({ declined: expect.stringContaining("future") })
    expect(read("customers who bought both web and store")).toMatchObject({
      declined: expect.stringContaining("both")
    })
  })

  it("declines a ranking within groups and a metric where a dimension belongs", () => {
    expect(read("top 2 customers by revenue per region")).toMatchObject({
      declined: expect.stringContaining("within each group")
    })
    expect(read("revenue per order")).toMatchObject({ declined: expect.stringContaining("no dimension for \"order\"") })
  })

  it("reads a model derived from a schema: a table's name counts its rows and groups by its name", () => {
    const derived = [{
      connector_id: 9,
      reviewed: false,
      model: {
        name: "saas",
        tables: [
          {
            name: "accounts",
            base_table: { table: "accounts" },
            primary_key: { columns: ["id"] },
            dimensions: [
              { name: "name" },
              { name: "industry", values: [{ value: "Retail" }, { value: "Finance" }] },
              { name: "status", values: [{ value: "active" }, { value: "closed" }] }
            ],
            measures: [{ name: "accounts_count", agg: "count" as const }]
          },
          {
            name: "invoices",
            base_table: { table: "invoices" },
            primary_key: { columns: ["id"] },
            dimensions: [{ name: "status", values: [{ value: "paid" }, { value: "open" }] }],
            time_dimensions: [{ name: "issued_at" }],
            measures: [{ name: "invoices_count", agg: "count" as const }, { name: "amount", agg: "sum" as const }]
          }
        ] as const,
        relationships: [{
          name: "invoices_account",
          left_table: "invoices",
          right_table: "accounts",
          relationship_columns: [{ left_column: "account_id", right_column: "id" }] as const
        }]
      }
    }]
    const of = (question: string) => readFinding(question, {}, derived as never)
    expect(of("how many accounts in retail")).toMatchObject({
      connectorId: 9,
      query: { metrics: ["accounts_count"], filters: [{ dimension: "industry", operator: "=", values: ["Retail"] }] }
    })
    expect(of("top 3 accounts by amount in 2025")).toMatchObject({
      query: { metrics: ["amount"], dimensions: ["name"], limit: 3 }
    })
    // A name two tables share is the measured table's.
    expect(of("invoices by status")).toMatchObject({
      query: { metrics: ["invoices_count"], dimensions: ["invoices.status"] }
    })
    expect(of("accounts by status")).toMatchObject({ query: { dimensions: ["accounts.status"] } })
    // Words the schema lacks are looked up in the names the model does not list, then declined, named.
    expect(Reader.read("invoices of Acme Corp", derived as never, now)).toEqual({
      lookup: [
        { connectorId: 9, word: "acme", dimension: "name" },
        { connectorId: 9, word: "acme", dimension: "name", with: ["corp"] }
      ]
    })
    expect(of("churned accounts")).toEqual({
      declined: expect.stringMatching(/"churned" picks out .* and no name in the data is called so/)
    })
  })

  it("looks a word the model lacks up in the data, and reads the name it finds", () => {
    // Only dimensions whose values the model does not list, and which tell no rows apart: the run's
    // longest word, and the values holding all its words (a full name among many sharing a surname).
    expect(Reader.read("revenue from priya okafor", semantic, now)).toEqual({
      lookup: [
        { connectorId: 7, word: "okafor", dimension: "customer" },
        { connectorId: 7, word: "okafor", dimension: "customer", with: ["priya"] }
      ]
    })
    const okafor = { okafor: { customer: ["Priya Okafor"] } }
    // A name rows may share is split by what tells them apart, and said.
    expect(readFinding("revenue from Priya Okafor last year", okafor)).toEqual({
      connectorId: 7,
      query: {
        metrics: ["revenue"],
        dimensions: ["customer_number"],
        time: { start: "2025-01-01", end: "2026-01-01" },
        filters: [{ dimension: "customer", operator: "=", values: ["Priya Okafor"] }]
      },
      corrections: [],
      named: { value: "Priya Okafor", dimension: "customer", identifier: "customer_number" },
      identifiers: ["customer_number"]
    })
    // A word of one name only (as a whole word) is that name, said as taken; of several, the question
    // asks which (Clarifications.test.ts).
    expect(readFinding("orders from priya", { priya: { customer: ["Priya Okafor", "Priyanka Shah"] } }))
      .toMatchObject({ query: { filters: [{ values: ["Priya Okafor"] }] }, corrections: [["priya", "Priya Okafor"]] })
    expect(readFinding("orders from okafor", { okafor: { customer: ["Priya Okafor", "Sam Okafor"] } })).toMatchObject({
      clarify: { choices: [{ label: "Priya Okafor" }, { label: "Sam Okafor" }] }
    })
    expect(readFinding("revenue from atlantis")).toEqual({
      declined: expect.stringMatching(/"atlantis" picks out .* and no customer in the data is called so/)
    })
  })

  it("lists the values a question asks for, and says when the first or the last was", () => {
    expect(queryOf("list the customers in europe")).toEqual({
      metrics: [],
      dimensions: ["customer", "customer_number"],
      filters: [{ dimension: "region", operator: "=", values: ["Europe"] }]
    })
    expect(queryOf("which channels do we have")).toEqual({ metrics: [], dimensions: ["channel"] })
    // Ranked, it is a figure too: by revenue when the question names no measure, which it says.
    expect(read("who are our 3 biggest customers")).toMatchObject({
      assumed: "revenue",
      query: { metrics: ["revenue"], dimensions: ["customer", "customer_number"], limit: 3 }
    })
    // Counted, it is a figure (which this model has no metric for), never a list.
    expect(read("how many customers in europe")).toEqual({ declined: expect.stringContaining("what to measure") })
    expect(read("when was the last order")).toMatchObject({
      when: "last",
      query: { metrics: ["orders"], time: { grain: "day" }, order: [{ by: "time", direction: "desc" }], limit: 1 }
    })
    expect(read("when was our first order online in 2025")).toMatchObject({
      when: "first",
      query: {
        time: { grain: "day", start: "2025-01-01", end: "2026-01-01" },
        filters: [{ dimension: "channel", values: ["web"] }],
        order: [{ by: "time", direction: "asc" }]
      }
    })
    expect(read("when was revenue highest")).toMatchObject({ declined: expect.stringContaining("which month") })
  })
})
