/**
 * One side of `pnpm bench:http`, run as a child process so the load generator has its own core:
 *
 * - `seed`: migrates and seeds a store (an organization, its admin key, a playbook with reports and
 *   `--chats` chats), then prints `{key, playbookId}` as JSON.
 * - `sightline`: serves the standalone server over the store and prints `READY <port>`.
 * - `floor`: the floor for this work. It first runs one request per benchmarked path through Sightline
 *   in-process while recording every statement the driver receives (text and parameters, in order),
 *   closes Sightline, then serves those paths from a bare `node:http` handler that replays exactly
 *   those statements through the same driver (`pg` or PGlite), with no framework, and answers the
 *   rows as JSON. It prints `READY <port>`.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import { PGlite } from "@electric-sql/pglite"
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as Auth from "@sightline/core/Auth"
import * as Chats from "@sightline/core/Chats"
import * as Organizations from "@sightline/core/Organizations"
import * as Playbooks from "@sightline/core/Playbooks"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { createServer } from "node:http"
import { parseArgs } from "node:util"
import pg from "pg"
import * as Sightline from "../src/Sightline.js"

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    db: { type: "string" },
    "data-dir": { type: "string" },
    url: { type: "string" },
    prefix: { type: "string" },
    chats: { type: "string", default: "1000" },
    key: { type: "string" },
    paths: { type: "string" }
  }
})
const mode = positionals[0]
const options: Sightline.Options = {
  store: values.db === "postgres"
    ? { _tag: "Postgres", url: values.url! }
    : { _tag: "Pglite", dataDir: values["data-dir"]! },
  prefix: values.prefix,
  // The benchmark measures serving, not refusing: the limiter still runs on every request.
  rateLimitPerMinute: 1_000_000_000
}
const quiet = Logger.minimumLogLevel(LogLevel.None)

const seed = Effect.gen(function*() {
  const orgs = yield* Organizations.Organizations
  const { admin, organization } = yield* orgs.create({ name: "Bench", adminEmail: "bench@example.test" })
  const { key } = yield* (yield* ApiKeys.ApiKeys).bootstrap(organization.id, admin.id, "bench")
  const principal = yield* (yield* Auth.Auth).authenticateApiKey(key)
  const playbooks = yield* Playbooks.Playbooks
  const playbook = yield* playbooks.create(principal)
  yield* playbooks.update(principal, playbook.id, { name: "Weekly revenue", prompt: "Summarize revenue" })
  const chats = yield* Chats.Chats
  const count = Number(values.chats)
  for (let i = 0; i < count; i++) {
    const { run } = yield* chats.start(principal, { question: `Question number ${i}: how did revenue move?` })
    yield* chats.appendAssistantMessage(run, `Answer ${i}`)
    yield* chats.finish(run, "completed")
  }
  return { key, playbookId: playbook.id, at: DateTime.formatIso(yield* DateTime.now) }
})

const sightlineLayer = HttpApiBuilder.serve().pipe(
  Layer.provideMerge(Sightline.layer(options)),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(quiet)
)

const startSightline = async () => {
  const runtime = ManagedRuntime.make(sightlineLayer)
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
  if (address._tag !== "TcpAddress") throw new Error("no TCP address")
  return { runtime, port: address.port }
}

interface Statement {
  readonly text: string
  readonly params: ReadonlyArray<unknown>
  /** PGlite's simple protocol (parameterless statements) rather than `query`. */
  readonly exec?: boolean
}

/** Records the statements the drivers receive while `recording` is set. */
let recording: Array<Statement> | undefined
const recordingOn = () => {
  const pgQuery = pg.Client.prototype.query as (...args: Array<any>) => any
  pg.Client.prototype.query = function(this: pg.Client, ...args: Array<any>) {
    const [first, second] = args
    const text = typeof first === "string" ? first : first?.text
    if (recording !== undefined && typeof text === "string") {
      recording.push({ text, params: Array.isArray(second) ? second : first?.values ?? [] })
    }
    return pgQuery.apply(this, args)
  } as any
  const pgliteQuery = PGlite.prototype.query
  PGlite.prototype.query = function(this: PGlite, text: string, params?: Array<any>, opts?: any) {
    if (recording !== undefined) recording.push({ text, params: params ?? [] })
    return pgliteQuery.call(this, text, params, opts)
  } as any
  const pgliteExec = PGlite.prototype.exec
  PGlite.prototype.exec = function(this: PGlite, text: string, opts?: any) {
    if (recording !== undefined) recording.push({ text, params: [], exec: true })
    return pgliteExec.call(this, text, opts)
  } as any
}

const record = async (paths: ReadonlyArray<string>, key: string) => {
  recordingOn()
  const { port, runtime } = await startSightline()
  const recorded = new Map<string, Array<Statement>>()
  for (const path of paths) {
    const get = () => fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${key}` } })
    const warm = await get() // caches (prepared statements, pools) settle on the first request
    if (warm.status !== 200) throw new Error(`${path} answered ${warm.status}: ${await warm.text()}`)
    recording = []
    await (await get()).text()
    recorded.set(path, recording)
    recording = undefined
  }
  await runtime.dispose()
  return recorded
}

const serveFloor = async (recorded: Map<string, Array<Statement>>) => {
  type Run = (statements: ReadonlyArray<Statement>) => Promise<Array<unknown>>
  let run: Run
  if (values.db === "postgres") {
    const pool = new pg.Pool({ connectionString: values.url, max: 10 })
    run = async (statements) => {
      const client = await pool.connect()
      try {
        const out: Array<unknown> = []
        for (const s of statements) out.push((await client.query(s.text, s.params as Array<any>)).rows)
        return out
      } finally {
        client.release()
      }
    }
  } else {
    const db = new PGlite(values["data-dir"]!)
    await db.waitReady
    // PGlite is one session: whole requests run one at a time, as Sightline's client serializes them.
    let queue: Promise<unknown> = Promise.resolve()
    run = (statements) => {
      const next = queue.then(async () => {
        const out: Array<unknown> = []
        for (const s of statements) {
          out.push(
            s.exec === true
              ? (await db.exec(s.text)).map((r) => r.rows)
              : (await db.query(s.text, s.params as Array<any>)).rows
          )
        }
        return out
      })
      queue = next.catch(() => undefined)
      return next
    }
  }
  const server = createServer((request, response) => {
    const statements = recorded.get(request.url ?? "")
    if (statements === undefined) {
      response.writeHead(404).end()
      return
    }
    run(statements).then(
      (rows) => {
        const json = JSON.stringify(rows)
        response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(json) })
        response.end(json)
      },
      (error) => {
        response.writeHead(500).end(String(error))
      }
    )
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no TCP address")
  return address.port
}

if (mode === "seed") {
  const runtime = ManagedRuntime.make(Sightline.core(options).pipe(Layer.provide(quiet)))
  const seeded = await runtime.runPromise(seed)
  await runtime.dispose()
  process.stdout.write(`${JSON.stringify(seeded)}\n`)
} else if (mode === "sightline") {
  // Exit normally on SIGTERM, so that `node --cpu-prof` writes its profile.
  process.on("SIGTERM", () => process.exit(0))
  const { port } = await startSightline()
  process.stdout.write(`READY ${port}\n`)
} else if (mode === "floor") {
  const recorded = await record(JSON.parse(values.paths!), values.key!)
  const counts = Object.fromEntries([...recorded].map(([path, statements]) => [path, statements.length]))
  const port = await serveFloor(recorded)
  process.stdout.write(`READY ${port} ${JSON.stringify(counts)}\n`)
} else {
  process.stderr.write("usage: target.ts seed|sightline|floor --db pglite|postgres ...\n")
  process.exit(2)
}
