/**
 * The test harness: every suite runs against a real PGlite and a real PostgreSQL, never a mock.
 *
 * - `pglite`: one in-memory PGlite per test file, built on first use from the empty cluster the
 *   setup writes (`globalSetup.ts`).
 * - `postgres`: the server at `SIGHTLINE_TEST_DATABASE_URL` (default 127.0.0.1:5432, database
 *   `test`). Runs share that database, so each one works under its own random table prefix and
 *   drops its tables at the end. When the server is unreachable the suites fail on CI
 *   (`CI=true`) and are skipped visibly elsewhere.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { afterAll, describe, inject, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Migrations from "../../src/Migrations.js"
import * as PgliteClient from "../../src/PgliteClient.js"
import * as PostgresClient from "../../src/PostgresClient.js"
import * as SqlStore from "../../src/SqlStore.js"
import * as TablePrefix from "../../src/TablePrefix.js"

/** What a store layer under test provides: the ports, plus the client and prefix for inspection. */
export type StoreServices = SqlStore.Ports | SqlClient.SqlClient | TablePrefix.TablePrefix

/** One database of the harness. */
export interface TestDatabase {
  readonly name: "pglite" | "postgres"
  /** The client this file shares (one PGlite instance, or one pool). */
  readonly client: Layer.Layer<SqlClient.SqlClient>
  /** A new random table prefix (`t<hex>_`); its tables are dropped after the file. */
  readonly freshPrefix: () => string
  /** The store under `prefix` on the shared client; migrates when built. */
  readonly store: (prefix: string) => Layer.Layer<StoreServices, unknown>
  /** The store this file shares, under one random prefix, migrated once. */
  readonly shared: Layer.Layer<StoreServices>
}

export const postgresUrl = process.env.SIGHTLINE_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

/** The URL without its password, for messages. */
const displayUrl = (() => {
  try {
    const url = new URL(postgresUrl)
    if (url.password !== "") url.password = "***"
    return url.toString()
  } catch {
    return "(unparsable SIGHTLINE_TEST_DATABASE_URL)"
  }
})()

/** A fresh random prefix. Harness prefixes all look like this, so tests can tell them apart. */
export const randomPrefix = (): string => `t${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}_`
export const harnessPrefixPattern = /^t[0-9a-f]{12}_/

/** Whether PostgreSQL answers, with the reason when it does not. */
const probePostgres: Promise<Either.Either<void, string>> = Effect.runPromise(
  Effect.scoped(
    Effect.flatMap(
      PgClient.make({ url: Redacted.make(postgresUrl), connectTimeout: Duration.seconds(3) }),
      (sql) => sql`SELECT 1`
    )
  ).pipe(
    Effect.provide(Reactivity.layer),
    Effect.mapError((error) => String(error.cause ?? error.message)),
    Effect.asVoid,
    Effect.either
  )
)

const sharedContext = <R, E>(runtime: ManagedRuntime.ManagedRuntime<R, E>): Layer.Layer<R> =>
  Layer.effectContext(Effect.orDie(Effect.map(runtime.runtimeEffect, (rt) => rt.context)))

const makeDatabase = (
  name: TestDatabase["name"],
  clientLayer: Layer.Layer<SqlClient.SqlClient, unknown>
): TestDatabase => {
  const clientRuntime = ManagedRuntime.make(clientLayer)
  const client = sharedContext(clientRuntime)
  const prefixes: Array<string> = []
  const freshPrefix = () => {
    const prefix = randomPrefix()
    prefixes.push(prefix)
    return prefix
  }
  const store = (prefix: string): Layer.Layer<StoreServices, unknown> =>
    SqlStore.layer.pipe(Layer.provideMerge(TablePrefix.layer(prefix)), Layer.provideMerge(client))
  const sharedRuntime = ManagedRuntime.make(store(freshPrefix()))

  afterAll(async () => {
    await sharedRuntime.dispose()
    // Only touch the server when this file used it (the runtime is built lazily).
    if (prefixes.length > 0) {
      await clientRuntime.runPromise(Effect.forEach(prefixes, dropPrefix, { discard: true })).catch(() => undefined)
    }
    await clientRuntime.dispose()
  })

  return { name, client, freshPrefix, store, shared: sharedContext(sharedRuntime) }
}

/** Drops every table and function whose name starts with `prefix` (ours only: prefixes are random). */
export const dropPrefix = (prefix: string) => Migrations.drop.pipe(Effect.provide(TablePrefix.layer(prefix)))

// Top-level await: vitest evaluates this module once per test file, while it collects the tests, so
// the hooks registered by `makeDatabase` belong to that file.
const probe = await probePostgres
if (Either.isLeft(probe) && process.env.CI === "true") {
  throw new Error(`PostgreSQL unreachable at ${displayUrl} (CI=true, so this fails): ${probe.left}`)
}
const pglite = makeDatabase("pglite", PgliteClient.layer({ template: inject("pgliteTemplate") }))
const postgres: TestDatabase | string = Either.isRight(probe)
  ? makeDatabase("postgres", PostgresClient.layer({ url: postgresUrl }))
  : probe.left

/** Registers `suite` for each database; an unreachable PostgreSQL shows up as a skipped block. */
export const forEachDatabase = (suite: (database: TestDatabase) => void): void => {
  suite(pglite)
  if (typeof postgres === "string") {
    const title = `postgres: PostgreSQL unreachable at ${displayUrl}: skipped`
    console.warn(`${title} (${postgres})`)
    describe.skip(title, () => {
      it("runs the PostgreSQL suites", () => undefined)
    })
  } else {
    suite(postgres)
  }
}

/**
 * Runs a core contract suite against both databases, each with the store its file shares:
 * `runOnBothDatabases((name, layer) => memberRepoContract(name, layer))`.
 */
export const runOnBothDatabases = (
  contract: (name: string, layer: Layer.Layer<StoreServices, unknown>) => void
): void => forEachDatabase((database) => contract(`${database.name}`, database.shared))

/** The PGlite database of this file. */
export const pgliteDatabase: TestDatabase = pglite
