/**
 * The test harness: a real Sightline server on a real socket (127.0.0.1, a free port), over embedded
 * PGlite and over the PostgreSQL at `SIGHTLINE_TEST_DATABASE_URL` (default 127.0.0.1:5432, database
 * `test`), each run under its own random table prefix whose tables are dropped afterwards. Without a
 * PostgreSQL server the PostgreSQL suites are skipped visibly, except under `CI=true`, where they fail.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import { afterAll, beforeAll, describe, it } from "@effect/vitest"
import * as Server from "@sightline/http/Server"
import * as Harness from "@sightline/http/TestServer"
import * as Migrations from "@sightline/sql/Migrations"
import * as PostgresClient from "@sightline/sql/PostgresClient"
import * as TablePrefix from "@sightline/sql/TablePrefix"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
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

/**
 * The migrated, empty cluster that the test setup's build writes (`pnpm start`'s): a server over
 * PGlite loads it (about a second) instead of creating and migrating a cluster (four to five).
 */
const pgliteTemplate = fileURLToPath(new URL("../../dist/pglite-template.tar.gz", import.meta.url))

/** The catalogue of the test servers: the offline model twice, so roles can choose between two models. */
export const testCatalogue = JSON.stringify([
  { id: "offline", number: 1, provider: "offline", default: true },
  { id: "offline-fast", number: 2, provider: "offline", supports_fast_mode: true }
])

/** A new organization with its admin member and an admin API key. */
export type Org = Harness.Org

/** A running server, over embedded PGlite or PostgreSQL. */
export interface TestServer extends Omit<Harness.TestServer<ServerServices>, "stop"> {
  readonly database: "pglite" | "postgres"
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
  // The tables dropped at the end are the ones the server used: a test may give its own prefix. A
  // database in memory is the server's alone, so it keeps the default prefix, the one its template
  // was migrated under.
  const prefix = options.prefix ?? (database === "pglite" ? TablePrefix.defaultPrefix : randomPrefix())
  const full: Sightline.Options = {
    store: database === "pglite"
      ? { _tag: "Pglite", template: pgliteTemplate }
      : { _tag: "Postgres", url: postgresUrl },
    prefix,
    models: { models: testCatalogue },
    demoCache,
    // The test databases are on loopback: an operator's opt-in (a test of the default passes its own).
    connectorAccess: { network: { allowPrivate: true, allowHosts: [] }, allowSuperuser: false },
    ...options
  }
  const server = await Harness.start(serverLayer(full))
  const stop = async ({ keepTables = false }: { readonly keepTables?: boolean } = {}) => {
    // The server (and its worker) stops first, so nothing queries the tables while they go.
    await server.stop()
    if (database === "postgres" && !keepTables) await dropPrefix(prefix)
  }
  return { ...server, database, stop }
}

/**
 * Registers `suite` once per database, each with its own server (started before the block's tests,
 * stopped after). `server()` returns the running server inside tests.
 *
 * `databases` narrows it to one, for a suite whose behaviour does not depend on the store (the
 * repositories it reads are run on both by their contract suites) and whose second run would only
 * double minutes of the suite: the file says which and why.
 */
export const describeServers = (
  title: string,
  suite: (server: () => TestServer) => void,
  options: Partial<Sightline.Options> = {},
  databases: ReadonlyArray<"pglite" | "postgres"> = ["pglite", "postgres"]
): void => {
  for (const database of databases) {
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

export const body = Harness.body
