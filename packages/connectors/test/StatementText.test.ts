import { describe, expect, it } from "@effect/vitest"
import * as StatementText from "../src/internal/statementText.js"

const pg = { doubleQuotedStrings: false }

describe("StatementText", () => {
  it("keeps a statement's shape and drops every value", () => {
    expect(StatementText.withoutValues(
      `SELECT "Region", sum(amount) FROM sales s1 -- EU only
       WHERE region = 'EU' AND note = 'it''s' AND amount > 12.5e3 AND id = $1 /* secret 42 */ LIMIT 100`,
      pg
    )).toBe(
      `SELECT "Region", sum(amount) FROM sales s1 WHERE region = ? AND note = ? AND amount > ? AND id = $1 LIMIT ?`
    )
    expect(StatementText.withoutValues("SELECT $$Bob's$$, $x$ 7 $x$, E'a\\'b', x'ff'", pg)).toBe("SELECT ?, ?, ?, ?")
  })

  it("treats MySQL's double quotes as strings", () => {
    expect(StatementText.withoutValues(`SELECT * FROM t WHERE name = "Ann" AND city = 'Oslo'`, {
      doubleQuotedStrings: true
    })).toBe("SELECT * FROM t WHERE name = ? AND city = ?")
  })

  it("names the operation and bounds the text", () => {
    expect(StatementText.operationOf("  /* hi */ with x as (select 1) select * from x")).toBe("WITH")
    expect(StatementText.operationOf("-- c\nselect 1")).toBe("SELECT")
    expect(StatementText.withoutValues(`SELECT ${"a, ".repeat(2000)}b`, pg)).toHaveLength(2000)
  })
})
