/**
 * `pnpm bench:answers`: how many questions, typed as people type them, the server's model answers
 * correctly, declines, or answers wrong, on the DEMO data, against SQL written by hand.
 *
 * The built server runs as a process of its own on a fresh data directory with its default model
 * (the offline model unless `--model` names another of `SIGHTLINE_MODELS`). Each question of
 * `questions/demo.ts` is asked over `POST /v2/chats/stream`; the answer's last table is compared
 * with the hand-written query's rows (each row's text cells must appear in one answer row, and its
 * numbers within 0.5%).
 * - answerable questions: correct (the table matches), declined (no table), or wrong (a table that
 *   does not match: a confident wrong number, the failure that matters most);
 * - questions to decline (no hand SQL): declined, or wrong (any table).
 * Every wrong answer is listed with the reading the answer stated.
 *
 * The floor beside it is the hand-written SQL itself, run through the same connector runtime: every
 * answerable question has an answer in the data.
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
import * as DemoQuestions from "./questions/demo.js"

const { values } = parseArgs({
  options: { model: { type: "string" }, only: { type: "string" }, verbose: { type: "boolean", default: false } }
})
const port = 18_798
const questions = DemoQuestions.questions(new Date().getUTCFullYear() - 1)

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

  /** Asks a question: the rows of the answer's last table (none when it gave none), and its text. */
  const ask = async (
    question: string
  ): Promise<{ readonly rows: ReadonlyArray<Row> | undefined; readonly text: string }> => {
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
      sql === null ? Effect.succeed(undefined) : Effect.map(
        Effect.flatMap(ConnectorRuntime, (runtime) =>
          runtime.query(demo, { sql, clientAttributesJson: "{}", maxRows: 10_000, timeoutMillis: 60_000 })),
        (result) =>
          result.rows
      )).pipe(Effect.provide(Runtime.layer))
  )

  const picked = values.only === undefined ? questions.map((_, i) => i) : [Number(values.only) - 1]
  const outcome = {
    answerable: { correct: 0, declined: 0, wrong: 0 },
    unanswerable: { correct: 0, declined: 0, wrong: 0 }
  }
  const wrongs: Array<string> = []
  const started = Date.now()
  for (const i of picked) {
    const [question] = questions[i]!
    const expected = hand[i]
    const { rows, text } = await ask(question)
    // A decline may come after a query (a name looked up in the data): its text says so.
    const declined = rows === undefined || /^I (?:could not|can't|cannot)\b/.test(text)
    const verdict = declined
      ? "declined"
      : expected !== undefined && matches(expected, rows)
      ? "correct"
      : "wrong"
    outcome[expected === undefined ? "unanswerable" : "answerable"][verdict] += 1
    console.log(`${String(i + 1).padStart(3)}. ${verdict.padEnd(8)} ${question}`)
    // What the answer said it read: its first paragraph.
    const said = text.split("\n\n")[0]!.slice(0, 300)
    if (verdict === "wrong") wrongs.push(`${i + 1}. ${question}\n    read: ${said}`)
    if (values.verbose && verdict !== "correct") {
      console.log(`    said ${said}`)
      console.log(
        `    expected ${JSON.stringify(expected?.slice(0, 6))}\n    answered ${JSON.stringify(rows?.slice(0, 6))}`
      )
    }
  }
  const floor = hand.filter((rows) => rows !== undefined && rows.length > 0).length
  const answerable = hand.filter((rows) => rows !== undefined).length
  const total = {
    correct: outcome.answerable.correct,
    declined: outcome.answerable.declined + outcome.unanswerable.declined,
    wrong: outcome.answerable.wrong + outcome.unanswerable.wrong
  }
  console.log("")
  console.log("| group | questions | correct | declined | wrong |")
  console.log("|---|---:|---:|---:|---:|")
  const line = (name: string, o: { correct: number; declined: number; wrong: number }) =>
    console.log(`| ${name} | ${o.correct + o.declined + o.wrong} | ${o.correct} | ${o.declined} | ${o.wrong} |`)
  line("answerable (DEMO)", outcome.answerable)
  line("to decline (DEMO)", outcome.unanswerable)
  line("all", total)
  console.log(`\nfloor: the hand SQL answers ${floor} of ${answerable} answerable questions`)
  console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s to ask them all)`)
  if (wrongs.length > 0) console.log(`\nWrong answers, with what they read:\n${wrongs.join("\n")}`)
} finally {
  server?.stop()
}
