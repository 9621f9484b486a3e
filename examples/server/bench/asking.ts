/**
 * What `pnpm bench:answers` and `pnpm bench:conversations` share: the built server on a fresh data
 * directory, the DEMO connector and a SaaS database on the local PostgreSQL (made, and dropped
 * after), asking over `POST /v2/chats/stream`, the hand-written SQL run on each, and how an answer's
 * rows are compared with the hand rows.
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
import * as SaasQuestions from "./questions/saas.js"

/** A row of a table. */
export type Row = ReadonlyArray<unknown>

const isNumber = (value: unknown) =>
  typeof value === "number" || (typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value))

/** Whether an answer's rows hold every hand row: its text in one answer row, its numbers within 0.5%. */
export const matches = (hand: ReadonlyArray<Row>, answer: ReadonlyArray<Row>): boolean => {
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

/** What an answer showed: the rows of its last table (none when it showed none), its text and its chat. */
export interface Answer {
  readonly rows: ReadonlyArray<Row> | undefined
  readonly text: string
  readonly chatId: string | undefined
  /** It asked which of several readings was meant (a clarification), instead of answering. */
  readonly asked: boolean
}

/**
 * Whether an answer declined: no table, or a text that says so (a decline may come after a lookup),
 * or a clarification that asks which reading was meant: no answer either, and its question must name
 * the true reason too.
 */
export const declined = (answer: Answer): boolean =>
  answer.asked || answer.rows === undefined || /^I (?:could not|can't|cannot)\b/.test(answer.text)

/** The options both asking benches take: `--model`, `--only demo|saas`, `--verbose`, `--database`. */
export const options = () =>
  parseArgs({
    options: {
      model: { type: "string" },
      only: { type: "string" },
      verbose: { type: "boolean", default: false },
      database: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" }
    }
  }).values

/** The server, its two connectors, and the hand SQL on each. */
export interface Asking {
  /** Asks a question on a connector, or a follow-up in a chat (which keeps its connector). */
  readonly ask: (
    question: string,
    on: { readonly connectorId: number } | { readonly chatId: string },
    model?: string | undefined
  ) => Promise<Answer>
  readonly demoConnector: number
  readonly saasConnector: number
  /** The hand SQL's rows on the DEMO data (the same generated data, through the connector runtime). */
  readonly demoRows: (sql: string) => Promise<ReadonlyArray<Row>>
  /** The hand SQL's rows on the SaaS database. */
  readonly saasRows: (sql: string) => Promise<ReadonlyArray<Row>>
}

/** Runs `f` with the server and the databases, and removes them after. */
export const withAsking = async <A>(
  options: { readonly port: number; readonly database: string },
  f: (asking: Asking) => Promise<A>
): Promise<A> => {
  // The SaaS database, and a role of its own for the connector (connectors refuse superusers).
  const saasName = `sl_bench_saas_${process.pid}`
  const admin = new pg.Client({ connectionString: options.database })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${saasName}`)
  await admin.query(`CREATE ROLE ${saasName} LOGIN`)
  const saasUrl = new URL(options.database)
  saasUrl.pathname = `/${saasName}`
  const saas = new pg.Client({ connectionString: saasUrl.toString() })
  await saas.connect()
  for (const statement of SaasQuestions.setup) await saas.query(statement)
  await saas.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${saasName}`)

  BuiltServer.build()
  let server: BuiltServer.BuiltServer | undefined
  // One DEMO database for every hand query (each layer would build its own).
  const demoRuntime = ManagedRuntime.make(Runtime.layer)
  try {
    server = await BuiltServer.start(options.port, {
      SIGHTLINE_SANDBOX_DIR: "off",
      SIGHTLINE_CONNECTOR_ALLOW_PRIVATE: "1"
    })
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

    const ask: Asking["ask"] = async (question, on, model) => {
      const response = await fetch(`${base}/v2/chats/stream`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          question,
          ...("chatId" in on ? { chat_id: on.chatId } : { connector_ids: [on.connectorId] }),
          ...(model === undefined || "chatId" in on ? {} : { model })
        })
      })
      let rows: ReadonlyArray<Row> | undefined
      let text = ""
      let chatId: string | undefined
      let asked = false
      const parser = createParser({
        onEvent: (message) => {
          const event = JSON.parse(message.data)
          if (event.type === "metadata") chatId = event.chat_id
          if (event.type === "clarification") asked = true
          if (event.type === "asset" && event.asset.type === "table" && event.asset.content !== undefined) {
            rows = JSON.parse(event.asset.content).rows
          }
          if (event.type === "text") text += event.text
        }
      })
      const decoder = new TextDecoder()
      for await (const chunk of response.body!) parser.feed(decoder.decode(chunk, { stream: true }))
      return { rows, text, chatId, asked }
    }

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
    return await f({ ask, demoConnector: 1, saasConnector, demoRows, saasRows })
  } finally {
    server?.stop()
    await demoRuntime.dispose().catch(() => undefined)
    await saas.end().catch(() => undefined)
    await admin.query(`DROP DATABASE IF EXISTS ${saasName} WITH (FORCE)`).catch(() => undefined)
    await admin.query(`DROP ROLE IF EXISTS ${saasName}`).catch(() => undefined)
    await admin.end().catch(() => undefined)
  }
}
