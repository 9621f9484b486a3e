/**
 * The test harness: a real Sightline server on a real socket (127.0.0.1, a free port), over embedded
 * PGlite and over the PostgreSQL at `SIGHTLINE_TEST_DATABASE_URL` (default 127.0.0.1:5432, database
 * `test`), each run under its own random table prefix whose tables are dropped afterwards. Without a
 * PostgreSQL server the PostgreSQL suites are skipped visibly, except under `CI=true`, where they fail.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import { afterAll, beforeAll, describe, it } from "@effect/vitest"
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as Organizations from "@sightline/core/Organizations"
import * as Server from "@sightline/http/Server"
import * as Migrations from "@sightline/sql/Migrations"
import * as PostgresClient from "@sightline/sql/PostgresClient"
import * as TablePrefix from "@sightline/sql/TablePrefix"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"
import * as Sightline from "../../src/Sightline.js"

export const postgresUrl = process.env.SIGHTLINE_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

/** A fresh random table prefix. */
export const randomPrefix = (): string => `t${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}_`

/**
 * Drops the tables and functions of `prefix` on the PostgreSQL server (ours only: prefixes are
 * random). A failure is reported, not thrown: the test's own verdict stands.
 */
export const dropPrefix = (prefix: string): Promise<void> =>
  Effect.runPromise(
    Migrations.drop.pipe(Effect.provide([PostgresClient.layer({ url: postgresUrl }), TablePrefix.layer(prefix)]))
  ).catch((error) => console.warn(`could not drop the test tables of ${prefix}: ${String(error)}`))

const probe: Promise<string | undefined> = Effect.runPromise(
  Effect.scoped(
    Effect.flatMap(
      Layer.build(PostgresClient.layer({ url: postgresUrl, connectTimeout: Duration.seconds(3) })),
      (context) => Effect.provide(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`), context)
    )
  ).pipe(Effect.as(undefined), Effect.catchAllCause((cause) => Effect.succeed(String(cause))))
)
export const postgresProblem = await probe
if (postgresProblem !== undefined && process.env.CI === "true") {
  throw new Error(`PostgreSQL unreachable at ${postgresUrl} (CI=true, so this fails): ${postgresProblem}`)
}

/**
 * The DEMO database's cache that the test setup's build fills (`pnpm start`'s): each test process
 * loads it instead of building it for itself.
 */
const demoCache = fileURLToPath(new URL("../../dist/demo-cache", import.meta.url))

/** The catalogue of the test servers: the offline model twice, so roles can choose between two models. */
export const testCatalogue = JSON.stringify([
  { id: "offline", number: 1, provider: "offline", default: true },
  { id: "offline-fast", number: 2, provider: "offline", supports_fast_mode: true }
])

/** A new organization with its admin member and an admin API key. */
export interface Org {
  readonly organizationId: string
  readonly memberId: string
  readonly key: string
}

/** A running server. */
export interface TestServer {
  readonly database: "pglite" | "postgres"
  readonly baseUrl: string
  /** Runs an effect against the server's own services (use cases, ports, the SQL client). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, ServerServices>) => Promise<A>
  /** A new organization with an admin member and key (as `sightline org create` makes them). */
  readonly newOrg: (name?: string) => Promise<Org>
  /** `fetch` relative to the server; `key` becomes the bearer token; `json` the body. */
  readonly request: (
    path: string,
    init?: RequestInit & { readonly key?: string; readonly json?: unknown }
  ) => Promise<Response>
}

// Node closes an idle keep-alive connection after 5 s, and fetch drops it from its pool a little
// before; when the test process's event loop stalls (PGlite runs in it), fetch can reuse a
// connection the server is closing and see ECONNRESET. The clients here close first instead.
const keepIdleConnections = (server: ReturnType<typeof createServer>) => {
  server.keepAliveTimeout = 120_000
  return server
}

const serverLayer = (options: Sightline.Options) =>
  Server.layerServe.pipe(
    Layer.provideMerge(Sightline.layer(options)),
    Layer.provideMerge(
      NodeHttpServer.layer(() => Sightline.answerClientErrors(keepIdleConnections(createServer())), {
        port: 0,
        host: "127.0.0.1"
      })
    ),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
  )

/** Every service a test can reach through `run`. */
export type ServerServices = Layer.Layer.Success<ReturnType<typeof serverLayer>>

/** Starts a server by hand (tests that need two servers over one store); `stop` it afterwards. */
export const startServer = async (database: "pglite" | "postgres", options: Partial<Sightline.Options>): Promise<
  TestServer & {
    /** Stops the server; its PostgreSQL tables are dropped unless another server still uses them. */
    readonly stop: (options?: { readonly keepTables?: boolean }) => Promise<void>
  }
> => {
  // The tables dropped at the end are the ones the server used: a test may give its own prefix.
  const prefix = options.prefix ?? randomPrefix()
  const full: Sightline.Options = {
    store: database === "pglite" ? { _tag: "Pglite" } : { _tag: "Postgres", url: postgresUrl },
    prefix,
    models: { models: testCatalogue },
    demoCache,
    // The test databases are on loopback: an operator's opt-in (a test of the default passes its own).
    connectorAccess: { network: { allowPrivate: true, allowHosts: [] }, allowSuperuser: false },
    ...options
  }
  const runtime = ManagedRuntime.make(serverLayer(full))
  const address = await runtime.runPromise(HttpServer.HttpServer.pipe(Effect.map((server) => server.address)))
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  const baseUrl = `http://127.0.0.1:${address.port}`
  const run: TestServer["run"] = (effect) => runtime.runPromise(effect)
  const newOrg = (name = "Acme") =>
    run(Effect.gen(function*() {
      const orgs = yield* Organizations.Organizations
      const keys = yield* ApiKeys.ApiKeys
      const email = `admin-${crypto.randomUUID().slice(0, 8)}@example.test`
      const { admin, organization } = yield* orgs.create({ name, adminEmail: email })
      const { key } = yield* keys.bootstrap(organization.id, admin.id, "test")
      return { organizationId: organization.id as string, memberId: admin.id as string, key }
    }))
  const request: TestServer["request"] = (path, init = {}) => {
    const { json, key, ...rest } = init
    const headers = new Headers(rest.headers)
    if (key !== undefined) headers.set("authorization", `Bearer ${key}`)
    if (json !== undefined) headers.set("content-type", "application/json")
    return fetch(`${baseUrl}${path}`, {
      ...rest,
      headers,
      ...(json === undefined ? {} : { body: JSON.stringify(json) })
    })
  }
  const stop = async ({ keepTables = false }: { readonly keepTables?: boolean } = {}) => {
    // The server (and its worker) stops first, so nothing queries the tables while they go.
    await runtime.dispose()
    if (database === "postgres" && !keepTables) await dropPrefix(prefix)
  }
  return { database, baseUrl, run, newOrg, request, stop }
}

/**
 * Registers `suite` once per database, each with its own server (started before the block's tests,
 * stopped after). `server()` returns the running server inside tests.
 */
export const describeServers = (
  title: string,
  suite: (server: () => TestServer) => void,
  options: Partial<Sightline.Options> = {}
): void => {
  for (const database of ["pglite", "postgres"] as const) {
    if (database === "postgres" && postgresProblem !== undefined) {
      const skipped = `postgres: ${title}: PostgreSQL unreachable at ${postgresUrl}: skipped`
      console.warn(`${skipped} (${postgresProblem})`)
      describe.skip(skipped, () => {
        it("runs against PostgreSQL", () => undefined)
      })
      continue
    }
    describe(`${database}: ${title}`, () => {
      let current: (TestServer & { readonly stop: () => Promise<void> }) | undefined
      beforeAll(async () => {
        current = await startServer(database, options)
      })
      afterAll(async () => {
        await current?.stop()
      })
      suite(() => {
        if (current === undefined) throw new Error("the server is not started")
        return current
      })
    })
  }
}

/** The JSON body of a response, typed loosely for assertions. */
export const body = async (response: Response): Promise<any> => {
  const text = await response.text()
  try {
    return JSON.parse(text)
  } catch {
    throw new Error(`not JSON (${response.status}): ${text.slice(0, 200)}`)
  }
}
