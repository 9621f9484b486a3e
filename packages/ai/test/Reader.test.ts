import { describe, expect, it } from "@effect/vitest"
import * as SemanticModel from "@sightline/core/SemanticModel"
import * as Either from "effect/Either"
import * as Reader from "../src/internal/reader.js"
import { now, semantic, yaml as shopYaml } from "./utils/shop.js"

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

/** A catalogue: sales of products, which categories classify; products have a price and a launch date. */
const parsed = SemanticModel.parse(
  "semantic/catalogue.yaml",
  `name: catalogue
tables:
  - name: sales
    base_table: { table: sales }
    primary_key: { columns: [id] }
    dimensions:
      - name: channel
        values: [{ value: web }, { value: store }]
    time_dimensions: [{ name: sold_at, data_type: TIMESTAMP_TZ }]
    measures:
      - { name: revenue, agg: sum, expr: amount }
      - { name: units, agg: sum, expr: quantity, synonyms: [units sold] }
  - name: products
    base_table: { table: products }
    primary_key: { columns: [id] }
    dimensions:
      - { name: product, expr: name }
      - { name: list_price, expr: price, data_type: NUMBER, synonyms: [price, cost] }
    time_dimensions: [{ name: launch_date, expr: launched_on, data_type: DATE, synonyms: [launch, launched] }]
  - name: categories
    base_table: { table: categories }
    primary_key: { columns: [id] }
    dimensions:
      - name: category
        expr: name
        values: [{ value: Laptops, synonyms: [laptop] }, { value: Phones, synonyms: [phone] }]
relationships:
  - { name: sales_products, left_table: sales, right_table: products, relationship_columns: [{ left_column: product_id, right_column: id }] }
  - { name: products_categories, left_table: products, right_table: categories, relationship_columns: [{ left_column: category_id, right_column: id }] }
metrics:
  - { name: revenue_share, type: share, measure: revenue, synonyms: [share of revenue] }
`
)
if (Either.isLeft(parsed)) throw new Error(parsed.left.map(SemanticModel.formatProblem).join("\n"))
const catalogue = [{ connector_id: 3, model: parsed.right.file, reviewed: true }]

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

  it("compares periods as those periods, never the years around them, and keeps them in a follow-up", () => {
    expect(queryOf("revenue in Q1 2025 vs Q1 2024")).toEqual({
      metrics: ["revenue"],
      time: { periods: [{ start: "2024-01-01", end: "2024-04-01" }, { start: "2025-01-01", end: "2025-04-01" }] }
    })
    expect(queryOf("how did q4 compare to q3 last year in revenue by month")).toEqual({
      metrics: ["revenue"],
      time: {
        grain: "month",
        periods: [{ start: "2025-07-01", end: "2025-10-01" }, { start: "2025-10-01", end: "2026-01-01" }]
      }
    })
    // Whole years in a row stay a series by year.
    expect(queryOf("revenue 2024 vs 2025")).toMatchObject({ time: { grain: "year", start: "2024-01-01" } })
    expect(read("revenue last quarter versus the quarter before")).toMatchObject({
      declined: expect.stringContaining(`"the quarter before"`)
    })
    const followUp = Reader.read("and by channel?", semantic, now, [], {
      questions: ["revenue in Q1 2025 vs Q1 2024"],
      answers: []
    })
    expect(followUp).toMatchObject({
      query: { dimensions: ["channel"], time: { periods: [{ start: "2024-01-01" }, { start: "2025-01-01" }] } },
      followed: { kept: ["revenue", "Q1 2024 and Q1 2025"] }
    })
    // "Vs Q1 2024" after a question about Q1 2025 compares the two.
    expect(Reader.read("vs Q1 2024", semantic, now, [], { questions: ["revenue by channel in Q1 2025"], answers: [] }))
      .toMatchObject({
        query: {
          dimensions: ["channel"],
          time: { periods: [{ start: "2024-01-01", end: "2024-04-01" }, { start: "2025-01-01", end: "2025-04-01" }] }
        },
        followed: { kept: ["revenue", "by channel", "Q1 2025"], changed: ["compared with Q1 2024"] }
      })
    // A ranking within groups is kept while its group is.
    expect(Reader.read("just last year", semantic, now, [], { questions: ["top 2 customers per region"], answers: [] }))
      .toMatchObject({
        query: {
          dimensions: ["region", "customer", "customer_number"],
          time: { start: "2025-01-01", end: "2026-01-01" },
          limit_per: { dimensions: ["region"], limit: 2 }
        }
      })
  })

  it("ranks what a value classifies, and takes a share of the whole, not of the slice", () => {
    const catalogueQuery = (question: string) => {
      const result = readFinding(question, {}, catalogue)
      return result !== undefined && "query" in result ? result.query : result
    }
    // Laptops classify products: "the best selling laptop" is the first of them, not the category's total.
    expect(catalogueQuery("what is the best selling laptop")).toEqual({
      metrics: ["units"],
      dimensions: ["product"],
      filters: [{ dimension: "category", operator: "=", values: ["Laptops"] }],
      order: [{ by: "units", direction: "desc" }],
      limit: 1
    })
    expect(catalogueQuery("our top 3 phones by revenue")).toMatchObject({ dimensions: ["product"], limit: 3 })
    expect(catalogueQuery("top laptops")).toMatchObject({ dimensions: ["product"], metrics: ["revenue"] })
    expect(catalogueQuery("top laptops")).not.toHaveProperty("limit")
    // A share of the web's revenue is of all revenue: every channel shown, the web among them.
    const share = readFinding("what share of revenue came from the web", {}, catalogue)
    expect(share).toMatchObject({
      query: { metrics: ["revenue_share"], dimensions: ["channel"] },
      notes: ["A share is of the whole: every channel is shown, web among them"]
    })
    expect((share as Reader.Read).query).not.toHaveProperty("filters")
  })

  it("reads an attribute of what a name picks out as the attribute beside the name, with no measure", () => {
    const aero = { aero: { product: ["Aero Pro"] } }
    for (
      const [question, attribute] of [
        ["what does the Aero Pro cost", "list_price"],
        ["how much does the aero pro cost?", "list_price"],
        ["when did the Aero Pro launch", "launch_date"],
        ["which category is the Aero Pro in", "category"]
      ] as const
    ) {
      expect(readFinding(question, aero, catalogue)).toMatchObject({
        query: {
          metrics: [],
          dimensions: ["product", attribute],
          filters: [{ dimension: "product", operator: "=", values: ["Aero Pro"] }]
        }
      })
    }
    // A date with no name to be of is still no period.
    expect(readFinding("when did we launch", {}, catalogue)).toMatchObject({
      declined: expect.stringContaining("names the dates a period is read on")
    })
  })

  it("reads a measure's unfiltered sibling where its own filter would remove groups, or says it does", () => {
    const withSibling = SemanticModel.parse(
      "semantic/shop.yaml",
      shopYaml.replace(
        "      - { name: orders, agg: count, filters: [not_cancelled] }",
        "      - { name: orders, agg: count, filters: [not_cancelled], unfiltered: all_orders }\n" +
          "      - { name: all_orders, agg: count }"
      )
    )
    if (Either.isLeft(withSibling)) throw new Error(withSibling.left.map(SemanticModel.formatProblem).join("\n"))
    const shop = [{ connector_id: 7, model: withSibling.right.file, reviewed: true }]
    expect(readFinding("orders by status", {}, shop)).toMatchObject({
      query: { metrics: ["all_orders"], dimensions: ["status"] },
      notes: [expect.stringContaining("for the breakdown by status I read all orders")]
    })
    expect(readFinding("orders by channel", {}, shop)).toMatchObject({ query: { metrics: ["orders"] } })
    expect(readFinding("orders by channel", {}, shop)).not.toHaveProperty("notes")
    // With no sibling, the answer says what the filter removes.
    expect(read("revenue by status")).toMatchObject({
      query: { metrics: ["revenue"], dimensions: ["status"] },
      notes: [
        expect.stringMatching(/^Revenue is defined with not cancelled, so for the breakdown by status .* has no figure/)
      ]
    })
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

  it("declines causes and forecasts with their reason, whatever the words", () => {
    expect(read("why do customers cancel")).toMatchObject({ declined: expect.stringContaining("cause") })
    expect(read("forecast revenue for next year")).toMatchObject({ declined: expect.stringContaining("future") })
  })

  it("reads the entities with rows in each of two values as a condition on them, counted or listed", () => {
    expect(read("revenue of customers with both web and store")).toMatchObject({
      query: {
        metrics: ["revenue"],
        having_each: { entity: "customers", dimension: "channel", values: ["web", "store"] }
      }
    })
    const listed = queryOf("customers that have both online and in store orders")
    expect(listed).toMatchObject({ metrics: [], having_each: { entity: "customers", values: ["web", "store"] } })
    expect(listed.filters).toBeUndefined()
    // Whose rows, unread: declined for that reason.
    expect(read("revenue both web and store")).toMatchObject({ declined: expect.stringContaining("whose rows") })
  })

  it("reads where a change is as an investigation: the period against the one before, its filters and breakdown", () => {
    expect(read("why did revenue drop in march 2025?")).toEqual({
      investigate: {
        connectorId: 7,
        request: {
          metric: "revenue",
          period: { start: "2025-03-01", end: "2025-04-01" },
          compared_with: { start: "2025-02-01", end: "2025-03-01" }
        },
        expected: "down"
      }
    })
    // Two periods compared are those two; a breakdown is the drivers; a value keeps to its rows.
    expect(read("what drove the growth in orders from Q1 to Q2 2025 online by region")).toMatchObject({
      investigate: {
        request: {
          metric: "orders",
          period: { start: "2025-04-01" },
          compared_with: { start: "2025-01-01" },
          drivers: ["region"],
          filters: [{ dimension: "channel", values: ["web"] }]
        },
        expected: "up"
      }
    })
    expect(read("where is revenue coming from in 2025")).toEqual({
      investigate: {
        connectorId: 7,
        request: { metric: "revenue", period: { start: "2025-01-01", end: "2026-01-01" } }
      }
    })
    // "Which regions drove…" names its driver.
    expect(read("which regions explain the drop in orders in march 2025")).toMatchObject({
      investigate: { request: { metric: "orders", drivers: ["region"] }, expected: "down" }
    })
    expect(read("why did revenue drop")).toMatchObject({ declined: expect.stringContaining("names no period") })
  })

  it("ranks within groups, and declines a metric where a dimension belongs", () => {
    expect(queryOf("top 2 customers by revenue per region")).toEqual({
      metrics: ["revenue"],
      dimensions: ["region", "customer", "customer_number"],
      order: [{ by: "revenue", direction: "desc" }],
      limit_per: { dimensions: ["region"], limit: 2 }
    })
    // The ranked said in the singular is the first of each group; in the plural with no count, all
    // of them, ranked within their group.
    expect(queryOf("the biggest customer in each region")).toMatchObject({ limit_per: { limit: 1 } })
    expect(queryOf("biggest customers within each region")).toMatchObject({
      dimensions: ["region", "customer", "customer_number"],
      order: [{ by: "region" }, { by: "revenue", direction: "desc" }]
    })
    expect(queryOf("biggest customers within each region")).not.toHaveProperty("limit_per")
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
            time_dimensions: [{ name: "created_at" }],
            measures: [{ name: "accounts_count", agg: "count" as const }, { name: "seats", agg: "sum" as const }]
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
    // Every column is an attribute of the row a name picks out: a text or a date beside the name, a
    // number as its measure over that one row.
    const acme = { acme: { name: ["Acme"] } }
    const attribute = (question: string) => {
      const result = readFinding(question, acme, derived as never)
      return result !== undefined && "query" in result ? result.query : result
    }
    expect(attribute("what industry is acme in")).toEqual({
      metrics: [],
      dimensions: ["name", "industry"],
      filters: [{ dimension: "name", operator: "=", values: ["Acme"] }]
    })
    expect(attribute("when was acme created")).toMatchObject({ metrics: [], dimensions: ["name", "created_at"] })
    expect(attribute("how many seats does acme have")).toMatchObject({
      metrics: ["seats"],
      filters: [{ dimension: "name", operator: "=", values: ["Acme"] }]
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
