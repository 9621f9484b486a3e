import { describe, expect, it } from "@effect/vitest"
import * as SqlStatement from "../src/internal/sqlStatement.js"

describe("SqlStatement.notOneQuery", () => {
  it("lets one SELECT or WITH query through, with its strings, names and comments", () => {
    for (
      const sql of [
        "SELECT 1",
        "select region, sum(amount) AS total FROM sales GROUP BY region;",
        "  (SELECT 1) UNION (SELECT 2)",
        "WITH t AS (SELECT 1 AS n) SELECT n FROM t",
        "SELECT 'insert; delete' AS words, \"update\" FROM t -- delete everything\n",
        "SELECT `order` FROM t /* drop; it */",
        "SELECT comment, share, set_config FROM t WHERE a # b = 0"
      ]
    ) expect([sql, SqlStatement.notOneQuery(sql)]).toEqual([sql, undefined])
  })

  it("refuses what is not one query, in any dialect's reading", () => {
    const cases: ReadonlyArray<readonly [string, RegExp]> = [
      ["", /empty/],
      ["-- nothing", /empty/],
      ["ANALYZE SELECT 1", /does not begin with SELECT or WITH/],
      ["SET statement_timeout = 0", /does not begin/],
      ["EXPLAIN ANALYZE SELECT 1", /does not begin/],
      ["SELECT 1; SELECT 2", /more than one statement/],
      ["WITH x AS (INSERT INTO t VALUES (1) RETURNING id) SELECT * FROM x", /INSERT/],
      ["WITH x AS (DELETE FROM t RETURNING id) SELECT * FROM x", /DELETE/],
      ["SELECT * INTO copy FROM t", /INTO/],
      ["SELECT * FROM t FOR UPDATE", /UPDATE/],
      // PostgreSQL reads `'\'` as a whole string, MySQL as an open one: both readings must hold.
      ["SELECT '\\'; DELETE FROM t; --' AS a", /more than one statement/],
      // MySQL reads `#` as a comment, PostgreSQL as an operator.
      ["SELECT 1 # x\n; DELETE FROM t", /more than one statement/],
      // A dollar-quoted body is a string in PostgreSQL only: a `;` in it is a second statement in MySQL.
      ["SELECT $$; DELETE FROM t$$ AS body", /more than one statement/]
    ]
    for (const [sql, why] of cases) {
      expect([sql, SqlStatement.notOneQuery(sql)]).toEqual([sql, expect.stringMatching(why)])
    }
  })
})
