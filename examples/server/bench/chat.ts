/**
 * `pnpm bench:chat`: the latency Sightline adds to a streamed answer.
 *
 * A loopback OpenAI-compatible server streams each answer as `--tokens` tokens, one every
 * `--pace-ms`. For each question the benchmark notes when the provider wrote its first and last
 * token, and when the client (a real SSE parser over `POST /v2/chats/stream`) saw the first `text`
 * event and `done`. Two floors are measured in the same run, alternating with Sightline:
 *
 * - the direct floor: the same client reading the provider's own stream, what loopback HTTP and SSE
 *   parsing cost without Sightline. "Added" is Sightline's latency over it.
 * - the relay floor (`relay.ts`): a hand-written process between the provider and the client that
 *   stores each event before it hands it on, as Sightline does. It takes the hops any such service
 *   takes (a process in between, a database round trip per event), so Sightline's latency over it is
 *   what Sightline's own work adds.
 *
 * The servers run in child processes, so they do not share an event loop with the provider and the
 * client.
 *
 * Then, followers (`GET /v2/chats/{id}/stream`): how much later than the asker a follower on the
 * other server process (over PostgreSQL: two processes, LISTEN/NOTIFY between them; on PGlite, the
 * same process) gets each event, and the server's RSS with 1,000 followers of one live answer.
 *
 * With each answer, the CPU it cost: of the Sightline process, of the relay, and of PostgreSQL, read
 * from `/proc` (`cpu.ts`) over each question and the 20 ms after it (what a server does once the
 * answer is out counts too). The direct floor's questions give what the processes spend meanwhile
 * anyway.
 *
 * Options: `--questions` (default 60), `--tokens` (20), `--pace-ms` (10), `--db pglite|postgres`
 * (default pglite; `--url` for PostgreSQL), `--pin` (the event loop of the provider and the client on
 * CPU 1, those of the servers on CPU 0, with `taskset`: as a client on another host, whose reading of
 * `done` never waits behind the server's own work after it).
 */
import { createParser } from "eventsource-parser"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { bundleServer } from "../../../scripts/bundle.mjs"
import { postgresCpuMs, processCpuMs } from "./cpu.js"
import { dropStore } from "./drop.js"

const { values } = parseArgs({
  options: {
    questions: { type: "string", default: "60" },
    tokens: { type: "string", default: "20" },
    "pace-ms": { type: "string", default: "10" },
    db: { type: "string", default: "pglite" },
    pin: { type: "boolean", default: false },
    url: {
      type: "string",
      default: process.env.SIGHTLINE_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
    }
  }
})
// On PostgreSQL the run's tables live under a random prefix, dropped at the end.
const prefix = `bench${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}_`
const questions = Number(values.questions)
const tokens = Number(values.tokens)
const pace = Number(values["pace-ms"])

// What the provider wrote, for the request in flight (requests are sequential).
let firstWrite = 0
let lastWrite = 0

const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${
    JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })
  }\n\n`

// A question that asks for a long answer gets `longTokens` tokens (the streams held open for RSS).
const longTokens = 1_500

const provider = http.createServer((req, res) => {
  let body = ""
  req.on("data", (data) => (body += data))
  req.on("end", async () => {
    if (req.url?.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" })
      return res.end(JSON.stringify({ data: [{ id: "paced" }] }))
    }
    res.writeHead(200, { "content-type": "text/event-stream" })
    res.flushHeaders()
    const count = body.includes("a long answer") ? longTokens : tokens
    for (let i = 0; i < count && !res.destroyed; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, pace))
      res.write(chunk({ content: `token${i} ` }))
      if (i === 0) firstWrite = performance.now()
      lastWrite = performance.now()
    }
    res.write(chunk({}, "stop"))
    res.end("data: [DONE]\n\n")
  })
})
await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve))
const providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`

// A process's main thread (the event loop) to one CPU; its helper threads (the collector's, the
// compiler's) stay free, as they were started.
const pin = (pid: number, cpu: number) => {
  if (values.pin) execFileSync("taskset", ["--cpu-list", "--pid", String(cpu), String(pid)])
}

const here = dirname(fileURLToPath(import.meta.url))
// The target server runs bundled, as `pnpm start` runs the standalone server (its memory with 1,000
// streams open is one of the figures).
const bundled = join(here, "../dist/bench/chat-target.js")
await bundleServer(join(here, "chat-target.ts"), bundled)
/** Starts a server process; with `key`, a second process over the same store serving that key. */
const startTarget = async (key?: string) => {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      // The memory report (SIGUSR2) collects garbage first, to tell live memory from garbage.
      "--expose-gc",
      bundled,
      "--provider",
      providerUrl,
      "--db",
      values.db!,
      ...(values.db === "postgres" ? ["--url", values.url!, "--prefix", prefix] : []),
      ...(key === undefined ? [] : ["--key", key])
    ],
    { stdio: ["ignore", "pipe", "inherit"] }
  )
  pin(child.pid!, 0)
  const [port, servedKey] = await new Promise<[number, string]>((resolve, reject) => {
    let out = ""
    child.stdout!.on("data", (data) => {
      out += data
      const match = /READY (\d+) (\S+)/.exec(out)
      if (match !== null) resolve([Number(match[1]), match[2]!])
    })
    child.on("exit", (code) => reject(new Error(`the server exited (${code})`)))
  })
  // Its memory reports (`kill -USR2`), newest last.
  const memory: Array<string> = []
  // Whole lines only: a report can arrive split across two chunks.
  let partial = ""
  child.stdout!.on("data", (data) => {
    const lines = (partial + data).split("\n")
    partial = lines.pop()!
    for (const line of lines) if (line.startsWith("MEMORY ")) memory.push(line.slice("MEMORY ".length))
  })
  return { child, port, key: servedKey, memory }
}
const target = await startTarget()
const { child, key, port } = target
const bundledRelay = join(here, "../dist/bench/relay.js")
await bundleServer(join(here, "relay.ts"), bundledRelay)
const relay = spawn(process.execPath, [
  bundledRelay,
  "--provider",
  providerUrl,
  "--db",
  values.db!,
  ...(values.db === "postgres" ? ["--url", values.url!, "--prefix", prefix] : [])
], { stdio: ["ignore", "pipe", "inherit"] })
pin(relay.pid!, 0)
const relayPort = await new Promise<number>((resolve, reject) => {
  let out = ""
  relay.stdout!.on("data", (data) => {
    out += data
    const match = /READY (\d+)/.exec(out)
    if (match !== null) resolve(Number(match[1]))
  })
  relay.on("exit", (code) => reject(new Error(`the relay exited (${code})`)))
})
// Over PostgreSQL, a second process follows the first one's answers; PGlite is one process.
const other = values.db === "postgres" ? await startTarget(key) : target
// The servers are started (on every CPU), so only this process's own thread moves.
pin(process.pid, 1)

interface Sample {
  readonly first: number
  readonly last: number
}

/** Reads an SSE response; `isFirst` and `isLast` recognise the events that are timed. */
const timeStream = async (
  response: Response,
  isFirst: (data: string) => boolean,
  isLast: (data: string) => boolean
): Promise<Sample> => {
  let first = 0
  let last = 0
  const parser = createParser({
    onEvent: (event) => {
      const now = performance.now()
      if (first === 0 && isFirst(event.data)) first = now
      if (isLast(event.data)) last = now
    }
  })
  const decoder = new TextDecoder()
  for await (const bytes of response.body!) parser.feed(decoder.decode(bytes, { stream: true }))
  if (first === 0 || last === 0) throw new Error("the stream ended without the timed events")
  return { first: first - firstWrite, last: last - lastWrite }
}

const viaSightline = async (): Promise<Sample> => {
  const response = await fetch(`http://127.0.0.1:${port}/v2/chats/stream`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ question: "Stream a paced answer" })
  })
  return timeStream(
    response,
    (data) => data.startsWith("{\"type\":\"text\""),
    (data) => data.startsWith("{\"type\":\"done\"")
  )
}

const viaRelay = async (): Promise<Sample> => {
  const response = await fetch(`http://127.0.0.1:${relayPort}/v2/chats/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ question: "Stream a paced answer" })
  })
  return timeStream(
    response,
    (data) => data.startsWith("{\"type\":\"text\""),
    (data) => data.startsWith("{\"type\":\"done\"")
  )
}

const direct = async (): Promise<Sample> => {
  const response = await fetch(`${providerUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "paced", stream: true, messages: [{ role: "user", content: "x" }] })
  })
  return timeStream(response, (data) => data.includes("\"content\""), (data) => data === "[DONE]")
}

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

// Warm up all three paths (JIT, the pools, PGlite's first statements).
for (let i = 0; i < 5; i++) {
  await viaSightline()
  await viaRelay()
  await direct()
}
const sightline: Array<Sample> = []
const relayed: Array<Sample> = []
const floor: Array<Sample> = []
// CPU milliseconds, summed over each path's questions.
const cpuNow = () => ({
  sightline: processCpuMs(child.pid!),
  second: other === target ? 0 : processCpuMs(other.child.pid!),
  relay: processCpuMs(relay.pid!),
  postgres: values.db === "postgres" ? postgresCpuMs() : 0
})
type Cpu = ReturnType<typeof cpuNow>
const zero: Cpu = { sightline: 0, second: 0, relay: 0, postgres: 0 }
const spent = { sightline: { ...zero }, relay: { ...zero }, direct: { ...zero } }
const measured = async (path: keyof typeof spent, question: () => Promise<Sample>) => {
  const before = cpuNow()
  const sample = await question()
  await new Promise((resolve) => setTimeout(resolve, 20))
  const after = cpuNow()
  for (const key of Object.keys(zero) as Array<keyof Cpu>) spent[path][key] += after[key] - before[key]
  return sample
}
for (let i = 0; i < questions; i++) {
  // Alternating, so all three see the same machine state.
  sightline.push(await measured("sightline", viaSightline))
  relayed.push(await measured("relay", viaRelay))
  floor.push(await measured("direct", direct))
}
relay.kill("SIGTERM")

const row = (label: string, field: keyof Sample) => {
  const fmt = (n: number) => n.toFixed(2).padStart(8)
  const at = (samples: ReadonlyArray<Sample>, p: number) => percentile(samples.map((s) => s[field]), p)
  const [s50, s99, r50, r99, f50, f99] = [
    at(sightline, 50),
    at(sightline, 99),
    at(relayed, 50),
    at(relayed, 99),
    at(floor, 50),
    at(floor, 99)
  ]
  return `| ${label.padEnd(30)} | ${
    [s50, s99, f50, f99, s50 - f50, s99 - f99, r50, r99, s50 - r50, s99 - r99].map(fmt).join(" | ")
  } |`
}
console.log(`bench:chat (${values.db}): ${questions} questions, ${tokens} tokens every ${pace} ms, milliseconds`)
console.log(
  "| latency | Sightline p50 | p99 | direct floor p50 | p99 | added p50 | added p99 | relay floor p50 | p99 | over the relay p50 | p99 |"
)
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
console.log(row("first token → first text event", "first"))
console.log(row("last token → done", "last"))

const cpuRow = (label: string, path: keyof typeof spent) =>
  `| ${label.padEnd(28)} | ${
    [
      spent[path].sightline,
      ...(other === target ? [] : [spent[path].second]),
      spent[path].relay,
      ...(values.db === "postgres" ? [spent[path].postgres] : [])
    ].map((ms) => (ms / questions).toFixed(2).padStart(8)).join(" | ")
  } |`
console.log(
  `\n| CPU ms per question | Sightline process |${other === target ? "" : " second Sightline process |"} relay |${
    values.db === "postgres" ? " PostgreSQL |" : ""
  }`
)
console.log(`|---|---:|${other === target ? "" : "---:|"}---:|${values.db === "postgres" ? "---:|" : ""}`)
console.log(cpuRow("a Sightline answer", "sightline"))
console.log(cpuRow("a relayed answer", "relay"))
console.log(cpuRow("the direct floor (idle)", "direct"))

// --- Followers: an event's delivery to a follower (GET /v2/chats/{id}/stream) on the other
// process (over PostgreSQL; on PGlite the same process), against its delivery to the asker.
const ask = (question: string) =>
  fetch(`http://127.0.0.1:${port}/v2/chats/stream`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ question })
  })

/** Reads a stream, noting when each event id arrived; `onFirst` runs at the first event. */
const arrivals = async (response: Response, onFirst?: (data: any) => void) => {
  const times = new Map<string, number>()
  const parser = createParser({
    onEvent: (event) => {
      if (times.size === 0) onFirst?.(JSON.parse(event.data))
      times.set(event.id!, performance.now())
    }
  })
  const decoder = new TextDecoder()
  for await (const bytes of response.body!) parser.feed(decoder.decode(bytes, { stream: true }))
  return times
}

const followOn = (targetPort: number, chatId: string) =>
  fetch(`http://127.0.0.1:${targetPort}/v2/chats/${chatId}/stream`, { headers: { authorization: `Bearer ${key}` } })

const delivery: Array<number> = []
for (let i = 0; i < Math.max(10, Math.floor(questions / 3)); i++) {
  let followed: Promise<{ connectedAt: number; times: Map<string, number> }> | undefined
  const asked = await arrivals(await ask("Stream a paced answer"), (metadata) => {
    followed = followOn(other.port, metadata.chat_id).then(async (response) => {
      const connectedAt = performance.now()
      return { connectedAt, times: await arrivals(response) }
    })
  })
  const { connectedAt, times } = await followed!
  // Only events appended after the follower was live (earlier ones are its backlog).
  for (const [id, at] of asked) {
    const seen = times.get(id)
    if (seen !== undefined && at > connectedAt) delivery.push(seen - at)
  }
}

const rss = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024
}
const streamsHeld = 1_000
const idleRss = rss(other.child.pid!)
let longChat = ""
const longAnswer = arrivals(await ask("Stream a long answer, please"), (metadata) => {
  longChat = metadata.chat_id
})
while (longChat === "") await new Promise((r) => setTimeout(r, 5))
/**
 * A held follower over node:http that only counts the events it reads (their `id:` lines): a
 * thousand of them share this process's core with the rest of the benchmark, and a server whose
 * clients fall behind holds what they have not read yet, so they are kept as light as they can be.
 */
const hold = (targetPort: number, chatId: string) =>
  new Promise<{ readonly count: number; readonly lastId: number }>((resolve, reject) => {
    const request = http.get(
      {
        host: "127.0.0.1",
        port: targetPort,
        path: `/v2/chats/${chatId}/stream`,
        headers: { authorization: `Bearer ${key}` }
      },
      (response) => {
        let count = 0
        let lastId = 0
        let rest = ""
        response.setEncoding("utf8")
        response.on("data", (text: string) => {
          const lines = (rest + text).split("\n")
          rest = lines.pop()!
          for (const line of lines) {
            if (line.startsWith("id: ")) {
              count++
              lastId = Number(line.slice(4))
            }
          }
        })
        response.on("end", () => resolve({ count, lastId }))
        response.on("error", reject)
      }
    )
    request.on("error", reject)
  })
const readers = Array.from({ length: streamsHeld }, () => hold(other.port, longChat))
// Sampled while the streams are open: the peak, and the last sample (after the burst of 1,000
// connections and their authentication has been collected).
const samples: Array<number> = []
const sampling = setInterval(() => samples.push(rss(other.child.pid!)), 250)
// Where the memory is while the streams are open: heap, buffers outside it, resident set.
setTimeout(() => other.child.kill("SIGUSR2"), 3_000)
const heldTimes = await Promise.all(readers)
clearInterval(sampling)
await longAnswer
const complete = heldTimes.filter(({ count }) => count >= longTokens).length

const crossLabel = values.db === "postgres" ? "asker on A → follower on B" : "asker → follower (one process)"
console.log("")
console.log(`| delivery to a follower (${delivery.length} events) | p50 | p99 |`)
console.log("|---|---:|---:|")
console.log(
  `| ${crossLabel} | ${percentile(delivery, 50).toFixed(2)} | ${percentile(delivery, 99).toFixed(2)} |`
)
console.log("")
console.log(`| ${streamsHeld} followers of one live answer | RSS MB |`)
console.log("|---|---:|")
console.log(`| server process, idle | ${idleRss.toFixed(0)} |`)
console.log(`| server process, ${streamsHeld} streams open: peak | ${Math.max(...samples).toFixed(0)} |`)
console.log(`| server process, ${streamsHeld} streams open: last sample | ${samples.at(-1)!.toFixed(0)} |`)
console.log(`| followers that read the whole answer | ${complete} of ${streamsHeld} |`)
if (other.memory.length > 0) {
  console.log(`\nserver process memory (MB) 3 s into the ${streamsHeld} streams: ${other.memory.at(-1)}`)
}

if (other !== target) {
  other.child.kill("SIGTERM")
  await new Promise((resolve) => other.child.once("exit", resolve))
}
child.kill("SIGTERM")
await new Promise((resolve) => child.once("exit", resolve))
provider.closeAllConnections()
provider.close()
if (values.db === "postgres") await dropStore(values.url!, prefix)
