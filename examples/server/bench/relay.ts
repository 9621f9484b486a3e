/**
 * The relay floor of `pnpm bench:chat`: the smallest server that does what the path of an answer
 * must do, written by hand with `node:http`, `fetch` and `pg` (or PGlite), run as its own process.
 * For `POST /v2/chats/stream` it streams the provider's answer to its client as SSE events, and,
 * as Sightline does, it stores each event in an event log before its client is handed it, and the
 * end (`done`) before it says so: one prepared INSERT per event, on its own connection.
 *
 * What it leaves out is everything else Sightline does on that path: authentication, the chat and
 * its run, batching, the model's tools, the message and cell of the answer, followers. So the
 * difference between the two is what Sightline adds over the hops any such service takes (a
 * process between the provider and the client, a database round trip before each event), which
 * the direct floor (the client reading the provider itself) does not take.
 *
 *   node relay.js --provider URL --db pglite|postgres [--url U] --prefix P
 */
import { PGlite } from "@electric-sql/pglite"
import { createParser } from "eventsource-parser"
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { parseArgs } from "node:util"
import pg from "pg"

const { values } = parseArgs({
  options: {
    provider: { type: "string" },
    db: { type: "string", default: "pglite" },
    url: { type: "string" },
    prefix: { type: "string", default: "relay_" }
  }
})
const table = `"${values.prefix}relay_events"`
const createText = `CREATE TABLE IF NOT EXISTS ${table} (
  chat uuid NOT NULL, id int NOT NULL, event jsonb NOT NULL, PRIMARY KEY (chat, id))`
const insertText = `INSERT INTO ${table} (chat, id, event) VALUES ($1, $2, $3)`

type Insert = (params: [string, number, string]) => Promise<unknown>
const insert: Insert = await (async () => {
  if (values.db === "postgres") {
    // One connection, as one run's events are written in order.
    const client = new pg.Client({ connectionString: values.url })
    await client.connect()
    await client.query(createText)
    return (params) => client.query({ name: "relay_insert", text: insertText, values: params })
  }
  const db = new PGlite()
  await db.waitReady
  await db.query(createText)
  return (params) => db.query(insertText, params)
})()

const server = createServer((request, response) => {
  if (request.method !== "POST" || request.url !== "/v2/chats/stream") {
    response.writeHead(404).end()
    return
  }
  request.resume()
  request.on("end", async () => {
    const chat = randomUUID()
    let id = 0
    const send = async (event: Record<string, unknown>) => {
      const data = JSON.stringify(event)
      await insert([chat, ++id, data])
      response.write(`id: ${id}\nevent: ${event.type}\ndata: ${data}\n\n`)
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    await send({ type: "metadata", id: randomUUID(), chat_id: chat })
    const upstream = await fetch(`${values.provider}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "paced", stream: true, messages: [{ role: "user", content: "x" }] })
    })
    // The provider's events in order: a write waits for the one before it.
    let chain = Promise.resolve()
    const parser = createParser({
      onEvent: (event) => {
        if (event.data === "[DONE]") {
          chain = chain.then(() => send({ type: "done", status: "completed" })).then(() => void response.end())
          return
        }
        const text = JSON.parse(event.data).choices?.[0]?.delta?.content
        if (typeof text === "string" && text !== "") chain = chain.then(() => send({ type: "text", text }))
      }
    })
    const decoder = new TextDecoder()
    for await (const bytes of upstream.body!) parser.feed(decoder.decode(bytes, { stream: true }))
    await chain
  })
})
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`)
})
process.on("SIGTERM", () => process.exit(0))
