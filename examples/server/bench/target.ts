/**
 * Sightline's side of `pnpm bench:http`, run as a child process (the floor is `floor.ts`):
 *
 * - `seed`: migrates and seeds a store (an organization, its admin key, a playbook and `--chats`
 *   chats), then prints `{key, playbookId}` as JSON.
 * - `sightline`: serves the standalone server over the store (rate limit `--limit` a minute) and
 *   prints `READY <port>`.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as Auth from "@sightline/core/Auth"
import * as ChatRuns from "@sightline/core/ChatRuns"
import * as Organizations from "@sightline/core/Organizations"
import * as Playbooks from "@sightline/core/Playbooks"
import * as Server from "@sightline/http/Server"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { createServer } from "node:http"
import { parseArgs } from "node:util"
import * as NodeV8 from "node:v8"
import * as Sightline from "../src/Sightline.js"

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    db: { type: "string" },
    "data-dir": { type: "string" },
    url: { type: "string" },
    prefix: { type: "string" },
    chats: { type: "string", default: "1000" },
    limit: { type: "string", default: "1000000000" },
    otlp: { type: "string" },
    sample: { type: "string", default: "1" }
  }
})
// PGlite's WebAssembly on V8's baseline compiler only, as the standalone server runs it (`bin.ts`).
if (values.db === "pglite") NodeV8.setFlagsFromString("--liftoff-only")
const mode = positionals[0]
const options: Sightline.Options = {
  store: values.db === "postgres"
    ? { _tag: "Postgres", url: values.url! }
    : { _tag: "Pglite", dataDir: values["data-dir"]! },
  prefix: values.prefix,
  // The benchmark measures serving, not refusing (the limiter still runs on every request); the
  // check before it sets a small limit to compare the 429s.
  rateLimitPerMinute: Number(values.limit),
  ...(values.otlp === undefined
    ? {}
    : {
      telemetry: {
        tracesUrl: values.otlp,
        serviceName: "sightline-bench",
        headers: {},
        sampler: { ratio: Number(values.sample), parentBased: true }
      }
    })
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
  const runs = yield* ChatRuns.ChatRuns
  const count = Number(values.chats)
  for (let i = 0; i < count; i++) {
    const { run } = yield* runs.start(principal, { question: `Question number ${i}: how did revenue move?` })
    yield* runs.complete(run, `Answer ${i}`, [])
  }
  return { key, playbookId: playbook.id, at: DateTime.formatIso(yield* DateTime.now) }
})

const sightlineLayer = Server.layerServe.pipe(
  Layer.provideMerge(Sightline.layer(options)),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  // Around everything, as the CLI installs it: the server's fibers are forked here.
  Layer.provide(Sightline.observability(options)),
  Layer.provide(quiet)
)

const startSightline = async () => {
  const runtime = ManagedRuntime.make(sightlineLayer)
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
  if (address._tag !== "TcpAddress") throw new Error("no TCP address")
  return { runtime, port: address.port }
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
} else {
  process.stderr.write("usage: target.ts seed|sightline --db pglite|postgres ...\n")
  process.exit(2)
}
