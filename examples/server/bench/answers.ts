/**
 * `pnpm bench:answers`: how many questions, typed as people type them, the server's model answers
 * correctly, declines, or answers wrong, on the DEMO data, against SQL written by hand.
 *
 * The built server runs as a process of its own on a fresh data directory with its default model
 * (the offline model unless `--model` names another of `SIGHTLINE_MODELS`). Each question is asked
 * over `POST /v2/chats/stream`; the answer's last table is compared with the hand-written query's
 * rows (each row's text cells must appear in one answer row, and its numbers within 0.5%).
 * - correct: the table matches;
 * - declined: no table (the model said it could not answer);
 * - wrong: a table that does not match: a confident wrong number, the failure that matters most.
 *
 * The floor beside it is the hand-written SQL itself, run through the same connector runtime: every
 * question has an answer in the data.
 *
 *   pnpm bench:answers [--model offline] [--only 3] [--verbose: the rows of each answer that is not correct]
 */
import * as Runtime from "@sightline/connectors/Runtime"
import * as Connector from "@sightline/core/Connector"
import { ConnectorRuntime } from "@sightline/core/ConnectorRuntime"
import { ConnectorId, MemberId, OrganizationId } from "@sightline/core/Ids"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { createParser } from "eventsource-parser"
import { parseArgs } from "node:util"
import * as BuiltServer from "./builtServer.js"

const { values } = parseArgs({
  options: { model: { type: "string" }, only: { type: "string" }, verbose: { type: "boolean", default: false } }
})
const port = 18_798
const LY = new Date().getUTCFullYear() - 1
const PY = LY - 1

const notCancelled = "o.status <> 'cancelled'"
const lines = "order_items i JOIN orders o ON o.id = i.order_id"
const toRegion = "JOIN customers c ON c.id = o.customer_id JOIN regions r ON r.id = c.region_id"
const toCategory = "JOIN products p ON p.id = i.product_id JOIN categories ca ON ca.id = p.category_id"
const inYear = (year: number, column = "o.ordered_at") =>
  `${column} >= '${year}-01-01' AND ${column} < '${year + 1}-01-01'`

/** The questions, as people type them, with the SQL that answers them. */
const questions: ReadonlyArray<readonly [question: string, sql: string]> = [
  [
    "which sales channel makes us the most money",
    `SELECT o.channel, SUM(i.line_total) FROM ${lines} WHERE ${notCancelled} GROUP BY 1`
  ],
  [
    "top 5 products by revenue last year",
    `SELECT p.name, SUM(i.line_total) FROM ${lines} JOIN products p ON p.id = i.product_id
     WHERE ${notCancelled} AND ${inYear(LY)} GROUP BY 1 ORDER BY 2 DESC LIMIT 5`
  ],
  [
    "revenue by region last yr",
    `SELECT r.name, SUM(i.line_total) FROM ${lines} ${toRegion} WHERE ${notCancelled} AND ${inYear(LY)} GROUP BY 1`
  ],
  [
    `how many orders did we get each month in ${LY}`,
    `SELECT date_trunc('month', o.ordered_at)::date, COUNT(*) FROM orders o WHERE ${notCancelled} AND ${
      inYear(LY)
    } GROUP BY 1`
  ],
  [
    "whats our average order value by channel",
    `SELECT o.channel, SUM(i.line_total) / COUNT(DISTINCT o.id) FROM ${lines} WHERE ${notCancelled} GROUP BY 1`
  ],
  [
    "aov last year",
    `SELECT SUM(i.line_total) / COUNT(DISTINCT o.id) FROM ${lines} WHERE ${notCancelled} AND ${inYear(LY)}`
  ],
  [
    `new customers per month in ${LY}`,
    `SELECT date_trunc('month', created_at)::date, COUNT(*) FROM customers WHERE ${inYear(LY, "created_at")} GROUP BY 1`
  ],
  [
    "how many customers do we have in each region",
    `SELECT r.name, COUNT(*) FROM customers c JOIN regions r ON r.id = c.region_id GROUP BY 1`
  ],
  [
    "return rate by category",
    `SELECT ca.name, COUNT(rt.id) * 1.0 / COUNT(*) FROM ${lines} ${toCategory}
     LEFT JOIN returns rt ON rt.order_item_id = i.id WHERE ${notCancelled} GROUP BY 1`
  ],
  ["refunds by return reason", `SELECT reason, SUM(refund_amount) FROM returns GROUP BY 1`],
  [
    "units sold by category last year",
    `SELECT ca.name, SUM(i.quantity) FROM ${lines} ${toCategory} WHERE ${notCancelled} AND ${inYear(LY)} GROUP BY 1`
  ],
  [
    "revenue in APAC last year",
    `SELECT SUM(i.line_total) FROM ${lines} ${toRegion} WHERE ${notCancelled} AND r.code = 'APAC' AND ${inYear(LY)}`
  ],
  [
    "laptops revenue last yr",
    `SELECT SUM(i.line_total) FROM ${lines} ${toCategory} WHERE ${notCancelled} AND ca.name = 'Laptops' AND ${
      inYear(LY)
    }`
  ],
  [
    "which category earns the most",
    `SELECT ca.name, SUM(i.line_total) FROM ${lines} ${toCategory} WHERE ${notCancelled} GROUP BY 1`
  ],
  [
    "revenue from consumers vs businesses",
    `SELECT c.segment, SUM(i.line_total) FROM ${lines} JOIN customers c ON c.id = o.customer_id WHERE ${notCancelled} GROUP BY 1`
  ],
  [
    "who are our 10 biggest customers by revenue",
    `SELECT c.name, SUM(i.line_total) FROM ${lines} JOIN customers c ON c.id = o.customer_id
     WHERE ${notCancelled} GROUP BY c.id, c.name ORDER BY 2 DESC LIMIT 10`
  ],
  [
    "what was our largest order in dollars",
    `SELECT o.id, SUM(i.line_total) FROM ${lines} WHERE ${notCancelled} GROUP BY o.id ORDER BY 2 DESC LIMIT 1`
  ],
  [
    `monthly revenue ${PY}`,
    `SELECT date_trunc('month', o.ordered_at)::date, SUM(i.line_total) FROM ${lines} WHERE ${notCancelled} AND ${
      inYear(PY)
    } GROUP BY 1`
  ],
  [
    "revenue by quarter last year",
    `SELECT date_trunc('quarter', o.ordered_at)::date, SUM(i.line_total) FROM ${lines} WHERE ${notCancelled} AND ${
      inYear(LY)
    } GROUP BY 1`
  ],
  [
    "how much did we give away in discounts per category",
    `SELECT ca.name, SUM(i.quantity * i.unit_price - i.line_total) FROM ${lines} ${toCategory} WHERE ${notCancelled} GROUP BY 1`
  ],
  ["cancelled orders by channel", `SELECT channel, COUNT(*) FROM orders WHERE status = 'cancelled' GROUP BY 1`],
  ["how many returns did we get last year", `SELECT COUNT(*) FROM returns WHERE ${inYear(LY, "returned_at")}`],
  ["total refunds last year", `SELECT SUM(refund_amount) FROM returns WHERE ${inYear(LY, "returned_at")}`],
  [
    "revenue by channel in europe",
    `SELECT o.channel, SUM(i.line_total) FROM ${lines} ${toRegion} WHERE ${notCancelled} AND r.code = 'EU' GROUP BY 1`
  ],
  [
    "how many units did we sell last year",
    `SELECT SUM(i.quantity) FROM ${lines} WHERE ${notCancelled} AND ${inYear(LY)}`
  ],
  [
    `revenue ${LY} vs ${PY}`,
    `SELECT EXTRACT(YEAR FROM o.ordered_at)::int, SUM(i.line_total) FROM ${lines} WHERE ${notCancelled} GROUP BY 1`
  ],
  [
    "which region has the most customers",
    `SELECT r.name, COUNT(*) FROM customers c JOIN regions r ON r.id = c.region_id GROUP BY 1`
  ],
  [
    "what did latin america spend on phones last year",
    `SELECT SUM(i.line_total) FROM ${lines} ${toRegion} ${toCategory}
     WHERE ${notCancelled} AND r.code = 'LATAM' AND ca.name = 'Phones' AND ${inYear(LY)}`
  ],
  [
    "web revenue last year",
    `SELECT SUM(i.line_total) FROM ${lines} WHERE ${notCancelled} AND o.channel = 'web' AND ${inYear(LY)}`
  ],
  [
    "number of orders by region last year",
    `SELECT r.name, COUNT(*) FROM orders o ${toRegion} WHERE ${notCancelled} AND ${inYear(LY)} GROUP BY 1`
  ]
]

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

BuiltServer.build()
let server: BuiltServer.BuiltServer | undefined
try {
  server = await BuiltServer.start(port, { SIGHTLINE_SANDBOX_DIR: "off" })
  const { base, key } = server

  /** Asks a question and returns the rows of the answer's last table (none when it gave none). */
  const ask = async (question: string): Promise<ReadonlyArray<Row> | undefined> => {
    const response = await fetch(`${base}/v2/chats/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        question,
        connector_ids: [1],
        ...(values.model === undefined ? {} : { model: values.model })
      })
    })
    let rows: ReadonlyArray<Row> | undefined
    const parser = createParser({
      onEvent: (message) => {
        const event = JSON.parse(message.data)
        if (event.type === "asset" && event.asset.type === "table" && event.asset.content !== undefined) {
          rows = JSON.parse(event.asset.content).rows
        }
      }
    })
    const decoder = new TextDecoder()
    for await (const chunk of response.body!) parser.feed(decoder.decode(chunk, { stream: true }))
    return rows
  }

  // The floor: the hand-written SQL through the DEMO connector's runtime (the same generated data).
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
  const hand = await Effect.runPromise(
    Effect.forEach(questions, ([, sql]) =>
      Effect.map(
        Effect.flatMap(ConnectorRuntime, (runtime) =>
          runtime.query(demo, { sql, clientAttributesJson: "{}", maxRows: 10_000, timeoutMillis: 60_000 })),
        (result) =>
          result.rows
      )).pipe(Effect.provide(Runtime.layer))
  )

  const picked = values.only === undefined ? questions.map((_, i) => i) : [Number(values.only) - 1]
  const outcome = { correct: 0, declined: 0, wrong: 0 }
  const started = Date.now()
  for (const i of picked) {
    const [question] = questions[i]!
    const rows = await ask(question)
    const verdict = rows === undefined ? "declined" : matches(hand[i]!, rows) ? "correct" : "wrong"
    outcome[verdict] += 1
    console.log(`${String(i + 1).padStart(2)}. ${verdict.padEnd(8)} ${question}`)
    if (values.verbose && verdict !== "correct") {
      console.log(
        `    expected ${JSON.stringify(hand[i]!.slice(0, 6))}\n    answered ${JSON.stringify(rows?.slice(0, 6))}`
      )
    }
  }
  const floor = hand.filter((rows) => rows.length > 0).length
  console.log("")
  console.log("| questions | correct | declined | wrong | floor: answerable by the hand SQL |")
  console.log("|---|---|---|---|---|")
  console.log(
    `| ${picked.length} | ${outcome.correct} | ${outcome.declined} | ${outcome.wrong} | ${floor} of ${questions.length} |`
  )
  console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s to ask them all)`)
} finally {
  server?.stop()
}
