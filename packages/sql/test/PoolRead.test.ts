import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { PlaybookId } from "@sightline/core/Ids"
import * as Playbook from "@sightline/core/Playbook"
import { PlaybookRepo } from "@sightline/core/PlaybookRepo"
import { Fixtures } from "@sightline/core/testing"
import { withTransaction } from "@sightline/core/Transaction"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PoolRead from "../src/internal/poolRead.js"
import { forEachDatabase } from "./utils/databases.js"

forEachDatabase((database) =>
  describe(`PoolRead (${database.name})`, () => {
    // Direct reads that count what they are given, over the client's own.
    const counted = () => {
      const calls: Array<string> = []
      const layer = Layer.effect(
        PoolRead.PoolReads,
        Effect.map(PoolRead.PoolReads, (pool) => ({
          query: (text, values) => {
            calls.push(text)
            return pool.query(text, values)
          }
        }))
        // The harness types its client as a `SqlClient`; both clients also provide their direct reads.
      ).pipe(Layer.provide(database.client as Layer.Layer<SqlClient.SqlClient | PoolRead.PoolReads>))
      return { calls, layer }
    }
    const table = `pool_read_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`

    it.effect("a hot read inside a transaction sees the transaction's own writes", () =>
      Effect.gen(function*() {
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const repo = yield* PlaybookRepo
        const playbook = new Playbook.PlaybookRecord(Playbook.make({
          id: PlaybookId.make(Fixtures.uuid()),
          organizationId: org.id,
          ownerId: member.id,
          at: yield* DateTime.now
        }))
        // The read that `GET /v2/playbooks/{id}` makes, before the creating transaction commits: on
        // another connection it would not see the playbook.
        const seen = yield* withTransaction(Effect.gen(function*() {
          yield* repo.create(playbook)
          return yield* repo.getWithReports(org.id, playbook.id, { limit: 10, offset: 0 })
        }))
        expect(Option.map(seen, ({ playbook }) => playbook.id)).toEqual(Option.some(playbook.id))
      }).pipe(Effect.provide(database.shared)))

    it.effect("outside a transaction a read runs directly; inside one, on the transaction's connection", () => {
      const { calls, layer } = counted()
      return Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const read = yield* PoolRead.reader
        yield* sql`CREATE TABLE ${sql(table)} (n int)`
        expect(yield* read(sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`)).toEqual([
          { n: 0 }
        ])
        expect(calls).toHaveLength(1)
        const inside: Array<unknown> = []
        const exit = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO ${sql(table)} VALUES (1)`
          inside.push(...yield* read(sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`))
          return yield* Effect.fail("roll back" as const)
        })).pipe(Effect.exit)
        expect(exit).toEqual(Exit.fail("roll back"))
        // The uncommitted row was seen, and not directly: the read took the transaction's connection.
        expect(inside).toEqual([{ n: 1 }])
        expect(calls).toHaveLength(1)
        expect(yield* read(sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`)).toEqual([
          { n: 0 }
        ])
        expect(calls).toHaveLength(2)
        yield* sql`DROP TABLE ${sql(table)}`
      }).pipe(Effect.provide(Layer.merge(database.client, layer)))
    })

    // PGlite is one session: a direct read that went ahead while another fiber's transaction holds it
    // would run inside that transaction, and see (and could be rolled back with) its writes.
    it.live("a direct read never runs inside another fiber's transaction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const read = yield* PoolRead.reader
        const other = `${table}_other`
        yield* sql`CREATE TABLE ${sql(other)} (n int)`
        const written = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const writer = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO ${sql(other)} VALUES (1)`
          yield* Deferred.succeed(written, undefined)
          yield* Deferred.await(release)
          return yield* Effect.fail("roll back" as const)
        })).pipe(Effect.exit, Effect.fork)
        yield* Deferred.await(written)
        const reading = yield* Effect.fork(
          read(sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(other)}`)
        )
        // Time for the read to go ahead, if it were going to.
        yield* Effect.sleep("20 millis")
        yield* Deferred.succeed(release, undefined)
        expect(yield* Fiber.join(writer)).toEqual(Exit.fail("roll back"))
        expect(yield* Fiber.join(reading)).toEqual([{ n: 0 }])
        yield* sql`DROP TABLE ${sql(other)}`
      }).pipe(Effect.provide(database.client)))

    it.effect("a compiled read is compiled once, and every call sends its own arguments", () => {
      const { calls, layer } = counted()
      return Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const compiledRead = yield* PoolRead.compiledReader
        let built = 0
        const rows = compiledRead((from: number, to: number) => {
          built++
          return sql<{ readonly n: number }>`SELECT n FROM generate_series(${from}::int, ${to}::int) AS n`
        })
        expect(yield* rows(1, 3)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }])
        expect(yield* rows(7, 8)).toEqual([{ n: 7 }, { n: 8 }])
        expect(yield* rows(5, 4)).toEqual([])
        // Built and compiled once (with stand-ins), sent three times with the same text.
        expect(built).toBe(1)
        expect(calls).toHaveLength(3)
        expect(new Set(calls).size).toBe(1)
        // In a transaction it is the statement itself, built with the call's arguments.
        expect(yield* sql.withTransaction(rows(2, 2))).toEqual([{ n: 2 }])
        expect(built).toBe(2)
        expect(calls).toHaveLength(3)
      }).pipe(Effect.provide(Layer.merge(database.client, layer)))
    })

    it.effect("a compiled read whose argument shapes the statement is compiled on every call", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const compiledRead = yield* PoolRead.compiledReader
        // The argument is part of the text, not a parameter: a stand-in would be wrong here.
        const rows = compiledRead((n: number) =>
          sql<{ readonly n: number }>`SELECT ${sql.literal(String(n))}::int AS n`
        )
        expect(yield* rows(1)).toEqual([{ n: 1 }])
        expect(yield* rows(2)).toEqual([{ n: 2 }])
      }).pipe(Effect.provide(database.client)))

    it.effect("a failing read fails with a SqlError, as a statement does", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const read = yield* PoolRead.reader
        const error = yield* Effect.flip(read(sql`SELECT * FROM ${sql(`${table}_missing`)}`))
        expect(error).toBeInstanceOf(SqlError)
      }).pipe(Effect.provide(database.client)))
  })
)
