/**
 * The second schema, a SaaS business (core's fixture `import/saas/schema.sql`, which the offline
 * model's bench asks questions of), with its metrics defined in dbt, Cube, LookML and OSI by the
 * fixtures beside it: each import, compiled in each engine's dialect, gives the figures of SQL
 * written by hand, on PGlite, PostgreSQL and MariaDB. The rows are PostgreSQL's `generate_series`,
 * copied into MariaDB as they are.
 */
import { PGlite } from "@electric-sql/pglite"
import * as SemanticCompiler from "@sightline/core/SemanticCompiler"
import * as SemanticImport from "@sightline/core/SemanticImport"
import * as SemanticModel from "@sightline/core/SemanticModel"
import type * as SemanticQuery from "@sightline/core/SemanticQuery"
import * as Either from "effect/Either"
import mysql from "mysql2/promise"
import * as fs from "node:fs"
import * as NodePath from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { positional } from "../src/internal/mysql.js"
import { url as postgresUrl } from "./utils/postgres.js"

type Row = ReadonlyArray<unknown>
type Dialect = SemanticCompiler.DialectName

const fixtures = NodePath.join(__dirname, "..", "..", "core", "test", "fixtures", "import", "saas")
const statements = fs.readFileSync(NodePath.join(fixtures, "schema.sql"), "utf8").replace(/^--.*\n/gm, "")
  .split(/;\s*\n/).map((s) => s.trim()).filter((s) => s !== "")
const tables = ["plans", "accounts", "subscriptions", "invoices"] as const

interface Engine {
  readonly dialect: Dialect
  /** Where the tables are: the import's `schema`. */
  readonly schema: string
  readonly run: (sql: string, params?: ReadonlyArray<unknown>) => Promise<ReadonlyArray<Row>>
}

/** A format's project, imported over `schema` and checked by the model's own rules. */
const imported = (format: SemanticImport.Format, schema: string) => {
  const root = NodePath.join(fixtures, format)
  const walk = (at: string): Array<string> =>
    fs.readdirSync(at, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(NodePath.join(at, e.name)) : [NodePath.join(at, e.name)]
    )
  const files = walk(root).map((p) => ({ path: NodePath.relative(root, p), text: fs.readFileSync(p, "utf8") }))
  const result = Either.getOrThrow(SemanticImport.importFiles(format, files, { schema, name: `saas_${format}` }))
  return { model: Either.getOrThrow(SemanticModel.validate("semantic/saas.yaml", result.model)), result }
}

const month = (dialect: Dialect, column: string) =>
  dialect === "mysql"
    ? `CAST(DATE_FORMAT(${column}, '%Y-%m-01') AS DATE)`
    : `CAST(date_trunc('month', ${column} AT TIME ZONE 'UTC') AS date)`

/** Each query, and what it means in SQL written by hand over the unqualified tables. */
const checks: ReadonlyArray<{ readonly query: SemanticQuery.SemanticQuery; readonly sql: (d: Dialect) => string }> = [
  {
    query: { metrics: ["mrr", "subscriptions"], dimensions: ["plan_name"] },
    sql: () =>
      `SELECT p.name, SUM(CASE WHEN s.status = 'active' THEN s.mrr END), COUNT(*)
       FROM subscriptions s JOIN plans p ON p.id = s.plan_id GROUP BY p.name`
  },
  {
    query: { metrics: ["mrr"], dimensions: ["industry"] },
    sql: () =>
      `SELECT a.industry, SUM(s.mrr) FROM subscriptions s JOIN accounts a ON a.id = s.account_id
       WHERE s.status = 'active' GROUP BY a.industry`
  },
  {
    query: { metrics: ["invoice_amount", "paid_amount", "paid_share"], dimensions: ["country"] },
    sql: () =>
      `SELECT a.country, SUM(i.amount), SUM(CASE WHEN i.status = 'paid' THEN i.amount END),
         SUM(CASE WHEN i.status = 'paid' THEN i.amount END) / SUM(i.amount)
       FROM invoices i JOIN accounts a ON a.id = i.account_id GROUP BY a.country`
  },
  {
    query: { metrics: ["accounts"], dimensions: ["industry"] },
    sql: () => `SELECT industry, COUNT(*) FROM accounts GROUP BY industry`
  },
  {
    query: {
      metrics: ["invoice_amount", "paid_amount"],
      time: { grain: "month", start: "2024-01-01", end: "2025-01-01" }
    },
    sql: (d) =>
      `SELECT ${month(d, "issued_at")}, SUM(amount), SUM(CASE WHEN status = 'paid' THEN amount END) FROM invoices
       WHERE issued_at >= '2024-01-01' AND issued_at < '2025-01-01' GROUP BY ${month(d, "issued_at")}`
  }
]

const key = (value: unknown): string =>
  value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10)

const expectSame = (actual: ReadonlyArray<Row>, expected: ReadonlyArray<Row>, what: string) => {
  const byKey = (rows: ReadonlyArray<Row>) => new Map(rows.map((row) => [key(row[0]), row.slice(1).map(Number)]))
  const a = byKey(actual)
  const e = byKey(expected)
  expect([...a.keys()].sort(), what).toEqual([...e.keys()].sort())
  for (const [k, values] of e) values.forEach((v, i) => expect(a.get(k)![i], `${what}: ${k}`).toBeCloseTo(v, 4))
}

const formats = ["dbt", "cube", "lookml", "osi"] as const
const metrics = ["accounts", "subscriptions", "mrr", "invoice_amount", "paid_amount", "paid_share"]
const dimensions = ["plan_name", "industry", "country", "subscription_status", "invoice_status"]

const suite = (engine: () => Engine) => {
  it("every metric, by every dimension it reaches and by month, gives the same figures in the four imports", async () => {
    const models = formats.map((format) => imported(format, engine().schema).model)
    const queries: Array<SemanticQuery.SemanticQuery> = metrics.flatMap((metric) => [
      ...dimensions.map((dimension) => ({ metrics: [metric], dimensions: [dimension] })),
      { metrics: [metric], time: { grain: "month" as const } }
    ])
    let compared = 0
    for (const query of queries) {
      const what = `${query.metrics[0]} by ${query.dimensions?.[0] ?? "month"}`
      // OSI's portable part has no ratio: its import refuses paid_share (the tests of each format, below).
      const asked = formats.flatMap((format, i) =>
        format === "osi" && query.metrics[0] === "paid_share" ? [] : [{ format, model: models[i]! }]
      )
      const compiled = asked.map(({ model }) => SemanticCompiler.compile(model, query, engine().dialect))
      // Each import reaches the same dimensions from each metric: its relationships are the same.
      expect(compiled.map(Either.isRight), what).toEqual(compiled.map(() => Either.isRight(compiled[0]!)))
      if (Either.isLeft(compiled[0]!)) continue
      const [first, ...rest] = await Promise.all(
        compiled.map((c) => engine().run(Either.getOrThrow(c).sql, Either.getOrThrow(c).params))
      )
      expect(first!.length, what).toBeGreaterThan(0)
      rest.forEach((rows, i) => expectSame(rows, first!, `${asked[i + 1]!.format}: ${what}`))
      compared++
    }
    // What reaches what: accounts reach no plan or status, subscriptions no invoice status, invoices no
    // plan or subscription status; each metric is read by month.
    expect(compared).toBe(2 + 4 + 4 + 3 + 3 + 3 + metrics.length)
  })

  for (const format of formats) {
    it(`the ${format} project gives the hand-written figures`, async () => {
      const { model, result } = imported(format, engine().schema)
      // OSI's portable part says a metric as one aggregate: a ratio of two is refused, and says why.
      const refused = result.report.filter((line) => line.outcome === "refused").map((line) => line.name)
      expect(refused).toEqual(format === "osi" ? ["paid_share"] : [])
      for (const check of checks) {
        const metrics = check.query.metrics.filter((m) => !refused.includes(m))
        const compiled = Either.getOrThrow(
          SemanticCompiler.compile(model, { ...check.query, metrics }, engine().dialect)
        )
        const hand = await engine().run(check.sql(engine().dialect))
        const kept = hand.map((row) => row.filter((_, i) => i === 0 || !refused.includes(check.query.metrics[i - 1]!)))
        expectSame(await engine().run(compiled.sql, compiled.params), kept, `${format}: ${compiled.reading.text}`)
      }
    })
  }
}

// PGlite is made here (MariaDB's rows are copied from it); PostgreSQL and MariaDB get a schema (a
// database) of their own.
const pglite = new PGlite()
let loaded: Promise<void> | undefined
const loadPglite = () =>
  loaded ??= (async () => {
    for (const statement of statements) await pglite.query(statement)
  })()
const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 10)
const schema = `sl_saas_${suffix}`

describe("the SaaS projects on PGlite", () => {
  beforeAll(loadPglite, 60_000)
  suite(() => ({
    dialect: "postgres",
    schema: "public",
    run: async (sql, params = []) => (await pglite.query<Row>(sql, [...params], { rowMode: "array" })).rows
  }))
})

let pgClient: pg.Client | undefined
describe("the SaaS projects on PostgreSQL", () => {
  beforeAll(async () => {
    pgClient = new pg.Client({ connectionString: postgresUrl })
    await pgClient.connect()
    await pgClient.query(`CREATE SCHEMA ${schema}`)
    await pgClient.query(`SET search_path TO ${schema}`)
    for (const statement of statements) await pgClient.query(statement)
  }, 60_000)
  afterAll(async () => {
    await pgClient?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await pgClient?.end()
  })
  suite(() => ({
    dialect: "postgres",
    schema,
    run: async (sql, params = []) =>
      (await pgClient!.query({ text: sql, values: [...params], rowMode: "array" })).rows as ReadonlyArray<Row>
  }))
})

const mysqlUrl = new URL(process.env.SIGHTLINE_TEST_MYSQL_URL ?? "mysql://root@127.0.0.1:3306/test")
const mysqlSettings = {
  host: mysqlUrl.hostname,
  port: Number(mysqlUrl.port || 3306),
  user: decodeURIComponent(mysqlUrl.username),
  password: decodeURIComponent(mysqlUrl.password),
  // Timestamps are UTC both ways, as the models read them.
  timezone: "Z"
}
const mysqlReachable = await mysql.createConnection({ ...mysqlSettings, connectTimeout: 3000 })
  .then(async (c) => (await c.end(), true), () => false)
if (!mysqlReachable && process.env.CI === "true") throw new Error(`MySQL unreachable at ${mysqlUrl.host}`)
if (!mysqlReachable) console.warn(`the SaaS projects on MariaDB: unreachable at ${mysqlUrl.host}: skipped`)

let my: mysql.Connection | undefined
describe.skipIf(!mysqlReachable)("the SaaS projects on MariaDB", () => {
  beforeAll(async () => {
    my = await mysql.createConnection(mysqlSettings)
    await my.query(`CREATE DATABASE ${schema}`)
    await my.query(`USE ${schema}`)
    await my.query(`SET time_zone = '+00:00'`)
    // PostgreSQL's tables in MariaDB's types, and PGlite's rows copied over.
    await loadPglite()
    for (const statement of statements.filter((s) => s.startsWith("CREATE TABLE"))) {
      await my.query(
        statement.replace(/\btext\b/g, "VARCHAR(200)").replace(/timestamptz/g, "DATETIME").replace(
          /REFERENCES (\w+)/g,
          "REFERENCES $1 (id)"
        )
      )
    }
    for (const table of tables) {
      const { fields, rows } = await pglite.query<Row>(`SELECT * FROM ${table}`, [], { rowMode: "array" })
      await my.query(`INSERT INTO ${table} (${fields.map((f) => f.name).join(", ")}) VALUES ?`, [rows])
    }
  }, 60_000)
  afterAll(async () => {
    await my?.query(`DROP DATABASE IF EXISTS ${schema}`)
    await my?.end()
  })
  suite(() => ({
    dialect: "mysql",
    schema,
    run: async (sql, params = []) => {
      // Bound as the MYSQL connector binds them.
      const { text, values } = positional(sql, params)
      const [rows] = await my!.query({ sql: text, rowsAsArray: true }, values)
      return rows as ReadonlyArray<Row>
    }
  }))
})

afterAll(() => pglite.close())
