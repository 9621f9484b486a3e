/**
 * The server side of `pnpm bench:chat`, run as a child process: the standalone server on an
 * in-memory PGlite store (or `--db postgres --url … --prefix …`) whose default model is the loopback
 * provider given by `--provider`. Prints `READY <port> <key>` once it serves; with `--key` (a second
 * process over the same PostgreSQL store) it serves that key's organization instead of making one.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as Organizations from "@sightline/core/Organizations"
import * as Server from "@sightline/http/Server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { createServer } from "node:http"
import { parseArgs } from "node:util"
import * as v8 from "node:v8"
import * as Sightline from "../src/Sightline.js"

const { values } = parseArgs({
  options: {
    provider: { type: "string" },
    db: { type: "string", default: "pglite" },
    url: { type: "string" },
    prefix: { type: "string" },
    // A second process over the same store serves the first one's organization.
    key: { type: "string" }
  }
})

const app = Server.layerServe.pipe(
  Layer.provideMerge(Sightline.layer({
    store: values.db === "postgres" ? { _tag: "Postgres", url: values.url! } : { _tag: "Pglite" },
    prefix: values.prefix,
    rateLimitPerMinute: 1_000_000_000,
    models: {
      compatibleUrl: values.provider!,
      models: JSON.stringify([{ id: "paced", number: 2, provider: "openai-compatible", default: true }])
    }
  })),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(Logger.minimumLogLevel(LogLevel.None))
)

const runtime = ManagedRuntime.make(app)
const { key, port } = await runtime.runPromise(Effect.gen(function*() {
  const address = (yield* HttpServer.HttpServer).address
  const port = address._tag === "TcpAddress" ? address.port : 0
  if (values.key !== undefined) return { key: values.key, port }
  const { admin, organization } = yield* (yield* Organizations.Organizations).create({
    name: "Bench",
    adminEmail: "bench@example.test"
  })
  const { key } = yield* (yield* ApiKeys.ApiKeys).bootstrap(organization.id, admin.id, "bench")
  return { key, port }
}))
process.stdout.write(`READY ${port} ${key}\n`)
// Where the memory is, on request of the bench (`kill -USR2`): the resident set and the heap as
// they were, the heap that is live after a full collection, and what V8 holds outside the heap.
process.on("SIGUSR2", () => {
  if (process.env.BENCH_HEAP_SNAPSHOT !== undefined) v8.writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT)
  const before = process.memoryUsage()
  // With `--expose-gc` (the bench starts it so): what is live, apart from garbage not yet collected.
  globalThis.gc?.()
  const { arrayBuffers, external, heapTotal, heapUsed, rss } = process.memoryUsage()
  const mb = (bytes: number) => Math.round(bytes / 1024 / 1024)
  process.stdout.write(
    `MEMORY ${
      JSON.stringify({
        rss: mb(before.rss),
        heapUsedBeforeGc: mb(before.heapUsed),
        heapLiveAfterGc: mb(heapUsed),
        heapTotal: mb(heapTotal),
        rssAfterGc: mb(rss),
        external: mb(external),
        arrayBuffers: mb(arrayBuffers)
      })
    }\n`
  )
})
process.on("SIGTERM", () => void runtime.dispose().then(() => process.exit(0)))
