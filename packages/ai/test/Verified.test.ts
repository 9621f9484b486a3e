import { describe, expect, it } from "@effect/vitest"
import type * as LanguageModel from "@sightline/core/LanguageModel"
import * as Verified from "../src/internal/verified.js"

const context = (reviewed: boolean, connectorId = 1): LanguageModel.SemanticContext => ({
  connector_id: connectorId,
  reviewed,
  model: {
    name: "shop",
    tables: [{ name: "orders", base_table: { table: "orders" } }],
    verified_queries: [
      {
        name: "by_channel",
        question: "Which sales channel makes us the most money?",
        sql: "SELECT 1",
        verified_at: 1767225600
      },
      {
        name: "by_month",
        question: "Revenue by month in a given year?",
        sql: "SELECT :year",
        parameters: [{ name: "year", type: "number" }]
      },
      {
        name: "top_products",
        question: "Top products by revenue",
        sql: "SELECT :n",
        parameters: [{ name: "n", type: "number", default: 10 }]
      }
    ]
  }
})

describe("offline model: verified queries first", () => {
  it("matches the same content words, whatever the function words, case and plurals", () => {
    expect(Verified.match("which sales channels make the most money", [context(true)])).toMatchObject({
      connectorId: 1,
      name: "by_channel"
    })
    expect(Verified.match("TOP PRODUCT BY REVENUE", [context(true)])?.name).toBe("top_products")
  })

  it("never matches a question that says more or less, a derived model, a value it would guess, or two models", () => {
    expect(Verified.match("Which sales channel makes the most money in Europe?", [context(true)])).toBeUndefined()
    expect(Verified.match("Which channel makes the most money?", [context(true)])).toBeUndefined()
    expect(Verified.match("Which sales channel makes us the most money?", [context(false)])).toBeUndefined()
    expect(Verified.match("Revenue by month in a given year", [context(true)])).toBeUndefined()
    expect(Verified.match("Which sales channel makes us the most money?", [context(true, 1), context(true, 2)]))
      .toBeUndefined()
  })

  it("fills number parameters from the question: a year, a count, or one of what the query lists", () => {
    expect(Verified.match("revenue by month in 2025", [context(true)])).toMatchObject({
      name: "by_month",
      params: { year: 2025 }
    })
    expect(Verified.match("top 5 products by revenue", [context(true)])).toMatchObject({
      name: "top_products",
      params: { n: 5 }
    })
    expect(Verified.match("top three products by revenue", [context(true)])?.params).toEqual({ n: 3 })
    expect(Verified.match("the top product by revenue", [context(true)])?.params).toEqual({ n: 1 })
    expect(Verified.match("top products by revenue", [context(true)])?.params).toEqual({})
    // A number no parameter takes is a word the query does not say.
    expect(Verified.match("Which sales channel makes us the most money in 2025?", [context(true)])).toBeUndefined()
    const found = Verified.match("top 5 products by revenue", [context(true)])!
    expect(Verified.reading(found)).toBe(
      "I read this as the verified query **top_products**: \"Top products by revenue\", with n 5 (checked)."
    )
  })

  it("says how it read the question, with who checked the query and when", () => {
    const found = Verified.match("which sales channel makes us the most money", [context(true)])!
    expect(Verified.reading(found)).toBe(
      "I read this as the verified query **by_channel**: \"Which sales channel makes us the most money?\" (checked on 2026-01-01)."
    )
  })
})
