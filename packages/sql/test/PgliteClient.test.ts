import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { OrganizationRepo } from "@sightline/core/OrganizationRepo"
import { Fixtures } from "@sightline/core/testing"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync, gzipSync } from "node:zlib"
import * as Tar from "tar"
import * as Migrations from "../src/Migrations.js"
import * as PgliteClient from "../src/PgliteClient.js"
import * as SqlStore from "../src/SqlStore.js"
import * as TablePrefix from "../src/TablePrefix.js"
import { pgliteDatabase } from "./utils/databases.js"

describe("PgliteClient", () => {
  it.effect("runs parameterless multi-statement SQL, one row array per statement", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql.unsafe("SELECT 1 AS a; SELECT 2 AS b")
      expect(rows).toEqual([[{ a: 1 }], [{ b: 2 }]])
    }).pipe(Effect.provide(pgliteDatabase.client)))

  it.effect("returns count(*)::int and timestamptz the way the pg driver does", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ n: number; at: Date }>`
        SELECT count(*)::int AS n, ${new Date("2024-01-02T03:04:05.678Z")}::timestamptz AS at
        FROM (VALUES (1), (2)) AS v(x)`
      expect(row).toEqual({ n: 2, at: new Date("2024-01-02T03:04:05.678Z") })
    }).pipe(Effect.provide(pgliteDatabase.client)))

  it.effect("prepares a statement with parameters once, and answers as the unprepared one would", () =>
    Effect.gen(function*() {
      const client = yield* PgliteClient.PgliteClient
      const sql = client.withoutTransforms()
      yield* sql`CREATE TABLE prepared_probe (
        id int PRIMARY KEY, note text, flag boolean, at timestamptz, local timestamp, bytes bytea
      )`
      const tricky = ["it's", "'); DROP TABLE prepared_probe; --", "back\\slash", "ünï ✓", ""]
      for (const [i, note] of tricky.entries()) {
        yield* sql`INSERT INTO prepared_probe (id, note, flag) VALUES (${i}, ${note}, ${i % 2 === 0})`
      }
      // A date is prepared too, as its ISO form, into a column with and without a time zone; the same
      // date through PGlite's own serializer (the unprepared `query`) lands the same.
      const at = new Date("2024-01-02T03:04:05.678Z")
      yield* sql`INSERT INTO prepared_probe (id, at, local) VALUES (${98}, ${at}, ${at})`
      yield* Effect.promise(() =>
        client.pglite.query("INSERT INTO prepared_probe (id, at, local) VALUES ($1, $2, $3)", [97, at, at])
      )
      // A value without a plain text form (bytes) runs unprepared, through PGlite's own serializer.
      yield* sql`INSERT INTO prepared_probe (id, bytes) VALUES (${99}, ${new Uint8Array([0, 39, 255])})`
      const read = (id: number) =>
        sql<{ id: number; note: string | null; flag: boolean | null; at: Date | null }>`
          SELECT id, note, flag, at FROM prepared_probe WHERE id = ${id}`
      for (const [i, note] of tricky.entries()) {
        expect(yield* read(i)).toEqual([{ id: i, note, flag: i % 2 === 0, at: null }])
      }
      expect(yield* read(98)).toEqual([{ id: 98, note: null, flag: null, at }])
      const [bytes] = yield* sql<{ bytes: Uint8Array }>`SELECT bytes FROM prepared_probe WHERE ${99} = id`
      expect(Array.from(bytes!.bytes)).toEqual([0, 39, 255])
      // The same as PGlite's own extended protocol gives, row for row.
      const columns = "id, note, flag, at, local::text AS local, bytes"
      const direct = yield* Effect.promise(() =>
        client.pglite.query(`SELECT ${columns} FROM prepared_probe WHERE id >= $1 ORDER BY id`, [0])
      )
      expect(yield* sql`SELECT ${sql.literal(columns)} FROM prepared_probe WHERE id >= ${0} ORDER BY id`).toEqual(
        direct.rows
      )
      const [mine, theirs] = (direct.rows as Array<{ at: Date; local: string }>).filter((row) => row.at !== null)
        .reverse()
      expect(mine).toEqual({ ...theirs, id: 98 })
      const inserts = yield* sql<{ statement: string }>`
        SELECT statement FROM pg_prepared_statements WHERE statement LIKE ${"%INSERT INTO prepared_probe (id, at, local)%"}`
      expect(inserts).toHaveLength(1)
      // One prepared statement per text, kept across a rollback.
      yield* sql.withTransaction(Effect.zipRight(read(1), Effect.fail("rolled back"))).pipe(Effect.ignore)
      expect(yield* read(1)).toHaveLength(1)
      const statements = yield* sql<{ statement: string }>`
        SELECT statement FROM pg_prepared_statements WHERE statement LIKE ${"%FROM prepared_probe WHERE id = $1%"}`
      expect(statements).toHaveLength(1)
      // Errors are PostgreSQL's own, as unprepared.
      const error = yield* Effect.flip(sql`SELECT note FROM prepared_probe WHERE id = ${"not a number"}`)
      expect(String((error.cause as { message?: string }).message)).toMatch(/invalid input syntax for type integer/)
    }).pipe(Effect.provide(pgliteDatabase.client)))

  it.live("a statement outside a transaction waits for the running transaction to end", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE IF NOT EXISTS session_probe (x int)`
      const inside = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const transaction = yield* Effect.fork(Effect.exit(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO session_probe VALUES (1)`
        yield* Deferred.succeed(inside, undefined)
        yield* Deferred.await(release)
        return yield* Effect.fail("roll back")
      }))))
      yield* Deferred.await(inside)
      // PGlite is one session: without the lock this read would run inside the open transaction
      // and see its uncommitted row.
      const outside = yield* Effect.fork(sql<{ n: number }>`SELECT count(*)::int AS n FROM session_probe`)
      yield* Effect.sleep("100 millis")
      expect(Option.isNone(yield* Fiber.poll(outside))).toBe(true)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(transaction)
      expect(yield* Fiber.join(outside)).toEqual([{ n: 0 }])
    }).pipe(Effect.provide(pgliteDatabase.client)))

  it.live("closes PGlite when its scope closes", () =>
    Effect.gen(function*() {
      const client = yield* Effect.scoped(PgliteClient.make())
      expect(client.pglite.closed).toBe(true)
    }).pipe(Effect.provide(Reactivity.layer)))

  it.live("a data directory keeps the store across reopening, and is not migrated twice", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "sightline-pglite-"))),
      (dataDir) =>
        Effect.gen(function*() {
          const org = yield* Fixtures.organization("Persistent").pipe(
            Effect.provide(SqlStore.layerPglite({ dataDir }))
          )
          const { applied, read } = yield* Effect.gen(function*() {
            return {
              applied: yield* Migrations.run,
              read: yield* (yield* OrganizationRepo).get(org.id)
            }
          }).pipe(
            Effect.provide(SqlStore.layer.pipe(
              Layer.provideMerge(TablePrefix.layer()),
              Layer.provideMerge(PgliteClient.layer({ dataDir }))
            ))
          )
          expect(read).toEqual(Option.some(org))
          expect(applied).toEqual([])
        }),
      (dataDir) => Effect.promise(() => rm(dataDir, { recursive: true, force: true }))
    ))

  it.live(
    "a new data directory or an in-memory database starts from a template: already migrated, and an existing directory ignores it",
    () =>
      Effect.acquireUseRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "sightline-template-"))),
        (dir) =>
          Effect.gen(function*() {
            const template = join(dir, "template.tar.gz")
            const migratedStore = (config: PgliteClient.PgliteClientConfig) =>
              SqlStore.layer.pipe(
                Layer.provideMerge(TablePrefix.layer()),
                Layer.provideMerge(PgliteClient.layer(config))
              )
            // The template: a freshly migrated, empty cluster.
            yield* PgliteClient.dumpTemplate(template).pipe(
              Effect.provide(SqlStore.layer.pipe(
                Layer.provideMerge(TablePrefix.layer()),
                Layer.provideMerge(PgliteClient.layerMemory)
              ))
            )
            const fresh = join(dir, "fresh")
            // Nothing left to migrate: the template brought every migration with it.
            const applied = yield* Migrations.run.pipe(
              Effect.provide(Layer.merge(TablePrefix.layer(), PgliteClient.layer({ dataDir: fresh, template })))
            )
            expect(applied).toEqual([])
            const org = yield* Fixtures.organization("From a template").pipe(
              Effect.provide(migratedStore({ dataDir: fresh, template }))
            )
            // Reopened with the template again: the directory's own data wins.
            const read = yield* Effect.flatMap(OrganizationRepo, (repo) => repo.get(org.id)).pipe(
              Effect.provide(migratedStore({ dataDir: fresh, template }))
            )
            expect(read).toEqual(Option.some(org))

            // In memory, the template is the start too; two databases from it are each their own,
            // and a missing template is an empty cluster.
            const inMemory = (file: string) =>
              Migrations.run.pipe(
                Effect.provide(Layer.merge(TablePrefix.layer(), PgliteClient.layer({ template: file })))
              )
            expect(yield* inMemory(template)).toEqual([])
            const apart = yield* Effect.flatMap(OrganizationRepo, (repo) => repo.get(org.id)).pipe(
              Effect.provide(migratedStore({ template }))
            )
            expect(apart).toEqual(Option.none())
            expect((yield* inMemory(join(dir, "missing.tar.gz"))).length).toBeGreaterThan(0)

            // A start that died while moving the unpacked template into place: the next start
            // (even one without the template) finishes the moves and opens the migrated cluster.
            const interrupted = join(dir, "interrupted")
            const unpacked = join(interrupted, ".template-unpacked")
            mkdirSync(unpacked, { recursive: true })
            yield* Effect.promise(() => Tar.x({ file: template, cwd: unpacked }))
            const entries = readdirSync(unpacked).filter((name) => name !== "PG_VERSION")
            for (const name of entries.slice(0, Math.ceil(entries.length / 2))) {
              renameSync(join(unpacked, name), join(interrupted, name))
            }
            expect(
              yield* Migrations.run.pipe(
                Effect.provide(Layer.merge(TablePrefix.layer(), PgliteClient.layer({ dataDir: interrupted })))
              )
            ).toEqual([])
            expect(existsSync(unpacked)).toBe(false)

            // One that died while unpacking starts over (what was unpacked does not count as a cluster).
            const restarted = join(dir, "restarted")
            mkdirSync(join(restarted, ".template-unpacking", "base"), { recursive: true })
            writeFileSync(join(restarted, ".template-unpacking", "base", "torn"), "half a file")
            expect(
              yield* Migrations.run.pipe(
                Effect.provide(Layer.merge(TablePrefix.layer(), PgliteClient.layer({ dataDir: restarted, template })))
              )
            ).toEqual([])
            expect(readdirSync(restarted).filter((name) => name.startsWith(".template"))).toEqual([])

            // A damaged template fails the start and leaves no cluster behind: a good one then works.
            const damaged = join(dir, "damaged.tar.gz")
            const tarball = gunzipSync(readFileSync(template))
            tarball[10] = tarball[10]! ^ 0xff // inside the first entry's name: its checksum fails
            writeFileSync(damaged, gzipSync(tarball))
            const retried = join(dir, "retried")
            const failed = yield* Effect.flip(Migrations.run.pipe(
              Effect.provide(
                Layer.merge(TablePrefix.layer(), PgliteClient.layer({ dataDir: retried, template: damaged }))
              )
            ))
            expect(String(failed.cause)).toMatch(/damaged/)
            expect(existsSync(join(retried, "PG_VERSION"))).toBe(false)
            expect(
              yield* Migrations.run.pipe(
                Effect.provide(Layer.merge(TablePrefix.layer(), PgliteClient.layer({ dataDir: retried, template })))
              )
            ).toEqual([])
          }),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      ),
    60_000
  )
})
