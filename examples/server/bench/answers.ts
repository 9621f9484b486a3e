/**
 * `pnpm bench:answers`: how many questions, typed as people type them, the server's model answers
 * correctly, declines, or answers wrong, against SQL written by hand, over two schemas: the DEMO
 * retail data with its curated semantic model (`questions/demo.ts`), and a SaaS business's plans,
 * accounts, subscriptions and invoices on the local PostgreSQL with no model in the library, read
 * through the model derived from its schema (`questions/saas.ts`).
 *
 * The built server runs as a process of its own on a fresh data directory with its default model
 * (the offline model unless `--model` names another of `SIGHTLINE_MODELS`). Each question is asked
 * over `POST /v2/chats/stream`; the answer's last table is compared
 * with the hand-written query's rows (each row's text cells must appear in one answer row, and its
 * numbers within 0.5%).
 * - answerable questions: correct (the table matches), declined (no table), or wrong (a table that
 *   does not match: a confident wrong number, the failure that matters most);
 * - questions to decline (no hand SQL): declined, or wrong (any table); a decline whose text does not
 *   give the question's true reason (its pattern) is counted in "wrong reason", and listed.
 * Every wrong answer is listed with the reading the answer stated.
 *
 * The floor beside it is the hand-written SQL itself (DEMO's through the same connector runtime):
 * every answerable question has an answer in the data.
 *
 *   pnpm bench:answers [--model offline] [--only demo|saas] [--verbose: the rows of each answer that is not correct]
 *     [--database postgres://postgres@127.0.0.1:5432/postgres: where the SaaS database is made, and dropped after]
 */
import * as Runtime from "@sightline/connectors/Runtime"
import * as Connector from "@sightline/core/Connector"
import { ConnectorRuntime } from "@sightline/core/ConnectorRuntime"
import { ConnectorId, MemberId, OrganizationId } from "@sightline/core/Ids"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { createParser } from "eventsource-parser"
import { parseArgs } from "node:util"
import pg from "pg"
import * as BuiltServer from "./builtServer.js"
import * as DemoQuestions from "./questions/demo.js"
import * as SaasQuestions from "./questions/saas.js"

const { values } = parseArgs({
  options: {
    model: { type: "string" },
    only: { type: "string" },
    verbose: { type: "boolean", default: false },
    database: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" }
  }
})
const port = 18_798
const lastYear = new Date().getUTCFullYear() - 1

type Row = ReadonlyArray<unknown>

const isNumber = (value: unknown) =>
  typeof value === "number" || (typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value))

/** Whether an answer's rows hold every hand row: its text in one answer row, its numbers within 0.5%. */
const matches = (hand: ReadonlyArray<Row>, answer: ReadonlyArray<Row>): boolean => {
  if (answer.length !== hand.length) return false
  return hand.every((row) => {
    const texts = row.filter((v) => !isNumber(v) && v !== null).map((v) => String(v).toLowerCase())
    const numbers = row.filter(isNumber).map(Number)
    return answer.some((candidate) => {
      const cells = candidate.map((v) => v === null ? "" : String(v).toLowerCase())
      const values = candidate.filter(isNumber).map(Number)
      return texts.every((text) => cells.some((cell) => cell.startsWith(text.slice(0, 10)))) &&
        numbers.every((n) => values.some((v) => Math.abs(v - n) <= Math.max(0.005 * Math.abs(n), 0.005)))
    })
  })
}

// The SaaS database, and a role of its own for the connector (connectors refuse superusers).
const saasName = `sl_bench_saas_${process.pid}`
const admin = new pg.Client({ connectionString: values.database })
await admin.connect()
await admin.query(`CREATE DATABASE ${saasName}`)
await admin.query(`CREATE ROLE ${saasName} LOGIN`)
const saasUrl = new URL(values.database)
saasUrl.pathname = `/${saasName}`
const saas = new pg.Client({ connectionString: saasUrl.toString() })
await saas.connect()
for (const statement of SaasQuestions.setup) await saas.query(statement)
await saas.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${saasName}`)

BuiltServer.build()
let server: BuiltServer.BuiltServer | undefined
try {
  server = await BuiltServer.start(port, { SIGHTLINE_SANDBOX_DIR: "off", SIGHTLINE_CONNECTOR_ALLOW_PRIVATE: "1" })
  const { base, key } = server
  const created = await fetch(`${base}/v2/connectors`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      config: {
        connector_type: "POSTGRES",
        name: "SaaS",
        postgres: {
          host: saasUrl.hostname,
          port: Number(saasUrl.port || 5432),
          user: saasName,
          password: "",
          database: saasName,
          ssl_mode: "disable"
        }
      }
    })
  })
  const saasConnector = ((await created.json()) as { id: number }).id

  /** Asks a question: the rows of the answer's last table (none when it gave none), and its text. */
  const ask = async (
    question: string,
    connectorId: number
  ): Promise<{ readonly rows: ReadonlyArray<Row> | undefined; readonly text: string }> => {
    const response = await fetch(`${base}/v2/chats/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        question,
        connector_ids: [connectorId],
        ...(values.model === undefined ? {} : { model: values.model })
      })
    })
    let rows: ReadonlyArray<Row> | undefined
    let text = ""
    const parser = createParser({
      onEvent: (message) => {
        const event = JSON.parse(message.data)
        if (event.type === "asset" && event.asset.type === "table" && event.asset.content !== undefined) {
          rows = JSON.parse(event.asset.content).rows
        }
        if (event.type === "text") text += event.text
      }
    })
    const decoder = new TextDecoder()
    for await (const chunk of response.body!) parser.feed(decoder.decode(chunk, { stream: true }))
    return { rows, text }
  }

  // The floor: the hand-written SQL through the DEMO connector's runtime (the same generated data),
  // and on the SaaS database itself.
  const at = DateTime.unsafeMake(0)
  const demo = new Connector.ConnectorRecord({
    id: ConnectorId.make(1),
    organization_id: OrganizationId.make(crypto.randomUUID()),
    owner_id: MemberId.make(crypto.randomUUID()),
    config: { connector_type: "DEMO", name: "Demo", demo: { dataset: "retail" } },
    allow_sql_write_operations: false,
    include_db_session_metadata: false,
    created_at: at,
    updated_at: at
  })
  // One DEMO database for every hand query (each layer would build its own).
  const demoRuntime = ManagedRuntime.make(Runtime.layer)
  const demoRows = (sql: string) =>
    demoRuntime.runPromise(
      Effect.flatMap(ConnectorRuntime, (runtime) =>
        runtime.query(demo, { sql, clientAttributesJson: "{}", maxRows: 10_000, timeoutMillis: 60_000 })).pipe(
          Effect.map((result) =>
            result.rows
          )
        )
    )
  const saasRows = async (sql: string) =>
    (await saas.query({ text: sql, rowMode: "array" })).rows.map((row: Array<unknown>) =>
      row.map((v) =>
        typeof v === "string" && /^-?\d+(\.\d+)?$/.test(v)
          ? Number(v)
          : v instanceof Date
          ? v.toISOString().slice(0, 10)
          : v
      )
    )
  const groups = [
    { name: "DEMO", connectorId: 1, questions: DemoQuestions.questions(lastYear), rows: demoRows },
    { name: "SaaS", connectorId: saasConnector, questions: SaasQuestions.questions(lastYear), rows: saasRows }
  ].filter((group) => values.only === undefined || group.name.toLowerCase() === values.only)

  type Outcome = { correct: number; declined: number; wrong: number; wrongReason: number }
  const empty = (): Outcome => ({ correct: 0, declined: 0, wrong: 0, wrongReason: 0 })
  const table: Array<readonly [string, Outcome]> = []
  const total = empty()
  const wrongs: Array<string> = []
  const wrongReasons: Array<string> = []
  const floors: Array<string> = []
  const started = Date.now()
  for (const group of groups) {
    const answerable = empty()
    const unanswerable = empty()
    let floor = 0
    for (const [i, [question, sql, reason]] of group.questions.entries()) {
      const expected = sql === null ? undefined : await group.rows(sql)
      if (expected !== undefined && expected.length > 0) floor += 1
      const { rows, text } = await ask(question, group.connectorId)
      // A decline may come after a query (a name looked up in the data): its text says so.
      const declined = rows === undefined || /^I (?:could not|can't|cannot)\b/.test(text)
      const verdict = declined
        ? "declined"
        : expected !== undefined && matches(expected, rows)
        ? "correct"
        : "wrong"
      ;(expected === undefined ? unanswerable : answerable)[verdict] += 1
      console.log(`${group.name} ${String(i + 1).padStart(3)}. ${verdict.padEnd(8)} ${question}`)
      // What the answer said it read: its first paragraph.
      const said = text.split("\n\n")[0]!.slice(0, 300)
      if (verdict === "wrong") wrongs.push(`${group.name} ${i + 1}. ${question}\n    read: ${said}`)
      if (verdict === "declined" && reason !== undefined && !reason.test(text)) {
        unanswerable.wrongReason += 1
        wrongReasons.push(`${group.name} ${i + 1}. ${question} (expected ${reason})\n    said: ${said}`)
      }
      if (values.verbose && verdict !== "correct") {
        console.log(`    said ${said}`)
        console.log(
          `    expected ${JSON.stringify(expected?.slice(0, 6))}\n    answered ${JSON.stringify(rows?.slice(0, 6))}`
        )
      }
    }
    table.push([`answerable (${group.name})`, answerable], [`to decline (${group.name})`, unanswerable])
    for (const o of [answerable, unanswerable]) {
      total.correct += o.correct
      total.declined += o.declined
      total.wrong += o.wrong
      total.wrongReason += o.wrongReason
    }
    const count = group.questions.filter(([, sql]) => sql !== null).length
    floors.push(`${group.name}: the hand SQL answers ${floor} of ${count} answerable questions`)
  }
  console.log("")
  console.log("| group | questions | correct | declined | of which for another reason | wrong |")
  console.log("|---|---:|---:|---:|---:|---:|")
  for (const [name, o] of [...table, ["all", total] as const]) {
    console.log(
      `| ${name} | ${o.correct + o.declined + o.wrong} | ${o.correct} | ${o.declined} | ${o.wrongReason} | ${o.wrong} |`
    )
  }
  console.log(`\nfloor: ${floors.join("; ")}`)
  console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s to ask them all)`)
  if (wrongs.length > 0) console.log(`\nWrong answers, with what they read:\n${wrongs.join("\n")}`)
  if (wrongReasons.length > 0) console.log(`\nDeclines for another reason:\n${wrongReasons.join("\n")}`)
  await demoRuntime.dispose()
} finally {
  server?.stop()
  await saas.end().catch(() => undefined)
  await admin.query(`DROP DATABASE IF EXISTS ${saasName} WITH (FORCE)`).catch(() => undefined)
  await admin.query(`DROP ROLE IF EXISTS ${saasName}`).catch(() => undefined)
  await admin.end().catch(() => undefined)
}
