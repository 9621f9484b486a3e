import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as EvalCompare from "../src/EvalCompare.js"
import * as EvalSet from "../src/EvalSet.js"
import * as SemanticModel from "../src/SemanticModel.js"

describe("EvalSet", () => {
  it("reads a set file: each case a question with SQL or rows, and tags", () => {
    const set = Either.getOrThrow(EvalSet.parse(
      "evals/revenue.yaml",
      "cases:\n  - question: Revenue by region\n    sql: SELECT 1\n    tags: [revenue]\n  - question: How many regions?\n    expected: [[5]]\n"
    ))
    expect(set).toEqual({
      path: "evals/revenue.yaml",
      name: "revenue",
      cases: [
        { question: "Revenue by region", expected: { kind: "sql", sql: "SELECT 1" }, tags: ["revenue"] },
        { question: "How many regions?", expected: { kind: "rows", rows: [[5]] }, tags: [] }
      ]
    })
    expect(EvalSet.isSetPath("evals/revenue.yaml")).toBe(true)
    expect(EvalSet.isSetPath("evals/deep/revenue.yaml")).toBe(false)
  })

  it("names the file and line of what does not read", () => {
    const problems = (text: string) =>
      Either.match(EvalSet.parse("evals/x.yaml", text), {
        onLeft: (all) => all.map(SemanticModel.formatProblem),
        onRight: () => []
      })
    expect(problems("cases: []\n")).toEqual(["evals/x.yaml:1: cases.0: is missing"])
    expect(problems("cases:\n  - question: Q\n")).toEqual([
      "evals/x.yaml: cases.0: give either sql or expected, not neither"
    ])
    expect(problems("cases:\n  - question: Q\n    sql: S\n    expected: [[1]]\n")).toEqual([
      "evals/x.yaml: cases.0: give either sql or expected, not both"
    ])
    expect(problems("cases:\n  - question: Q\n    sql: S\n    colour: red\n")).toEqual([
      expect.stringMatching(/^evals\/x\.yaml:4: cases\.0\.colour: /)
    ])
  })

  it("takes a semantic model's verified queries with defaults as its cases", () => {
    const model = Either.getOrThrow(SemanticModel.parse(
      "semantic/shop.yaml",
      `name: shop
tables:
  - { name: orders, base_table: { table: orders }, measures: [{ name: orders, agg: count }] }
verified_queries:
  - { name: all, question: How many orders?, sql: "SELECT count(*) FROM __orders" }
  - name: in_year
    question: Orders in a given year?
    parameters: [{ name: year, type: number }]
    sql: SELECT :year
`
    ))
    expect(EvalSet.ofModel(model).cases).toEqual([
      { question: "How many orders?", expected: { kind: "verified_query", name: "all" }, tags: ["verified_query"] }
    ])
  })
})

describe("EvalCompare", () => {
  it("ignores column names, extra columns and row order; keeps order when the SQL orders", () => {
    const expected = [["Europe", 10], ["Asia", 20.004]]
    expect(EvalCompare.compare(expected, [["asia", 3, 20], ["europe", 9, "10"]], { ordered: false })).toEqual({
      passed: true
    })
    expect(EvalCompare.compare(expected, [["Asia", 20], ["Europe", 10]], { ordered: true })).toEqual({
      passed: false,
      difference: "row 1: expected [\"Europe\",10], got [\"Asia\",20]"
    })
    expect(EvalCompare.compare(expected, [["Europe", 10]], { ordered: false }).difference).toBe(
      "expected 2 rows, got 1 row"
    )
    expect(EvalCompare.compare(expected, [["Europe", 10], ["Asia", 21]], { ordered: false }).difference).toBe(
      "expected a row [\"Asia\",20.004]; no row of the answer holds it"
    )
    expect(EvalCompare.compare(expected, undefined, { ordered: false })).toEqual({
      passed: false,
      difference: "the answer gave no table"
    })
    expect(EvalCompare.sameCell("2025-12-31", "2025-12-31T00:00:00.000Z")).toBe(true)
    expect(EvalCompare.sameCell(null, 0)).toBe(false)
  })

  it("reads an ORDER BY of the whole statement, not of a subquery or a string", () => {
    expect(EvalCompare.orders("SELECT a FROM t ORDER BY a")).toBe(true)
    expect(EvalCompare.orders("SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3) s")).toBe(false)
    expect(EvalCompare.orders("SELECT 'order by' FROM t")).toBe(false)
  })

  it("passes any permutation of the expected rows, and fails when a number moves past the tolerance", () => {
    const row = FastCheck.tuple(
      FastCheck.string({ minLength: 1, maxLength: 5 }),
      FastCheck.integer({ min: 1, max: 1e6 })
    )
    FastCheck.assert(
      FastCheck.property(
        FastCheck.uniqueArray(row, { minLength: 1, maxLength: 8, selector: ([name]) => name }),
        FastCheck.nat(),
        (rows, seed) => {
          const shuffled = [...rows].sort((a, b) => ((a[1] * 31 + seed) % 97) - ((b[1] * 31 + seed) % 97))
          expect(EvalCompare.compare(rows, shuffled, { ordered: false }).passed).toBe(true)
          const moved = rows.map(([name, n], i) => i === 0 ? [name, n * 1.02 + 1] : [name, n])
          expect(EvalCompare.compare(rows, moved, { ordered: false }).passed).toBe(false)
        }
      )
    )
  })
})
