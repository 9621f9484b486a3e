import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { PlaybookId } from "@sightline/core/Ids"
import * as Playbook from "@sightline/core/Playbook"
import { PlaybookRepo } from "@sightline/core/PlaybookRepo"
import { Fixtures } from "@sightline/core/testing"
import { withTransaction } from "@sightline/core/Transaction"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PoolRead from "../src/internal/poolRead.js"
import { forEachDatabase } from "./utils/databases.js"

forEachDatabase((database) =>
  describe(`PoolRead (${database.name})`, () => {
    // A pool that counts the reads it is given, over the client's own (PostgreSQL has one, PGlite none).
    const counted = () => {
      const calls: Array<string> = []
      const layer = Layer.effect(
        PoolRead.PoolReads,
        Effect.map(PoolRead.PoolReads, (pool) => ({
          query: (text, values, callback) => {
            calls.push(text)
            pool.query(text, values, callback)
          }
        }))
        // The harness types its client as a `SqlClient`; PostgreSQL's also provides its pool.
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

    if (database.name === "postgres") {
      it.effect("outside a transaction a read runs on the pool; inside one, on the transaction's connection", () => {
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
          // The uncommitted row was seen, and not through the pool: the read took the transaction's connection.
          expect(inside).toEqual([{ n: 1 }])
          expect(calls).toHaveLength(1)
          expect(yield* read(sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`)).toEqual([
            { n: 0 }
          ])
          expect(calls).toHaveLength(2)
          yield* sql`DROP TABLE ${sql(table)}`
        }).pipe(Effect.provide(Layer.merge(database.client, layer)))
      })

      it.effect("a failing read fails with a SqlError, as a statement does", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const read = yield* PoolRead.reader
          const error = yield* Effect.flip(read(sql`SELECT * FROM ${sql(`${table}_missing`)}`))
          expect(error).toBeInstanceOf(SqlError)
        }).pipe(Effect.provide(database.client)))
    }
  })
)
