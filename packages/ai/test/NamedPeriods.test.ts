import { describe, expect, it } from "@effect/vitest"
import * as SemanticModel from "@sightline/core/SemanticModel"
import * as Either from "effect/Either"
import * as Reader from "../src/internal/reader.js"
import { now, yaml } from "./utils/shop.js"

// The shop's model with the periods its business names.
const withPeriods = SemanticModel.parse(
  "semantic/shop.yaml",
  `${yaml}periods:
  - { name: back_to_school, synonyms: [back-to-school season], every_year: { from: "07-15", to: "09-10" } }
  - { name: holiday_season, every_year: { from: "12-15", to: "01-05" } }
  - { name: spring_sale, from: 2025-03-01, to: 2025-03-14 }
`
)
if (Either.isLeft(withPeriods)) throw new Error(withPeriods.left.map(SemanticModel.formatProblem).join("\n"))
const semantic = [{ connector_id: 7, model: withPeriods.right.file, reviewed: true }]
const read = (question: string) => Reader.read(question, semantic, now)

describe("named periods", () => {
  it("reads a period the model names: once, in the year named, or the latest that has begun", () => {
    // "now" is 2026-11-26: this year's back to school has begun, this year's holiday season has not.
    expect(read("revenue during back to school")).toMatchObject({
      query: { metrics: ["revenue"], time: { start: "2026-07-15", end: "2026-09-11" } }
    })
    expect(read("revenue in back-to-school season 2024 by channel")).toMatchObject({
      query: { metrics: ["revenue"], dimensions: ["channel"], time: { start: "2024-07-15", end: "2024-09-11" } }
    })
    // A range across the new year runs into the next.
    expect(read("orders in the holiday season")).toMatchObject({
      query: { metrics: ["orders"], time: { start: "2025-12-15", end: "2026-01-06" } }
    })
    expect(read("how much revenue in the spring sale")).toMatchObject({
      query: { metrics: ["revenue"], time: { start: "2025-03-01", end: "2025-03-15" } }
    })
  })

  it("checks the periods of a model file", () => {
    const problems = (periods: string) => {
      const parsed = SemanticModel.parse("semantic/shop.yaml", `${yaml}periods:\n${periods}`)
      return Either.isLeft(parsed) ? parsed.left.map((p) => p.message) : []
    }
    expect(problems("  - { name: a, from: 2025-03-01 }")).toEqual(["period a: give both from and to"])
    expect(problems("  - { name: a, from: 2025-03-09, to: 2025-03-01 }")).toEqual([
      "period a: from 2025-03-09 is after to 2025-03-01"
    ])
    expect(problems("  - { name: a }")).toEqual([
      "period a: give either from and to (once) or every_year (each year)"
    ])
    expect(problems("  - { name: a, every_year: { from: \"13-01\", to: \"01-02\" } }").join("\n")).toMatch(/MM-DD/)
  })
})

// The shop's model with a fiscal year from April, which questions name by name, label or synonym.
const withFiscal = SemanticModel.parse(
  "semantic/shop.yaml",
  `${yaml}custom_granularities:
  - { name: fiscal_year, label: Financial year, synonyms: [FY], grain: year, start_month: 4 }
`
)
if (Either.isLeft(withFiscal)) throw new Error(withFiscal.left.map(SemanticModel.formatProblem).join("\n"))
const readFiscal = (question: string) =>
  Reader.read(question, [{ connector_id: 7, model: withFiscal.right.file, reviewed: true }], now)

describe("custom granularities", () => {
  it("groups by a custom granularity the question names, and by the calendar's year otherwise", () => {
    expect(readFiscal("revenue by fiscal year")).toMatchObject({
      query: { metrics: ["revenue"], time: { grain: "fiscal_year" } }
    })
    expect(readFiscal("orders per FY by channel")).toMatchObject({
      query: { metrics: ["orders"], dimensions: ["channel"], time: { grain: "fiscal_year" } }
    })
    expect(readFiscal("revenue by financial year in 2025")).toMatchObject({
      query: { metrics: ["revenue"], time: { grain: "fiscal_year", start: "2025-01-01", end: "2026-01-01" } }
    })
    expect(readFiscal("revenue by year")).toMatchObject({ query: { metrics: ["revenue"], time: { grain: "year" } } })
  })
})
