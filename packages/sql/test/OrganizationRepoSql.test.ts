import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { OrganizationId } from "@sightline/core/Ids"
import { Organization } from "@sightline/core/Organization"
import { OrganizationRepo } from "@sightline/core/OrganizationRepo"
import { Fixtures } from "@sightline/core/testing"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { TablePrefix } from "../src/TablePrefix.js"
import { forEachDatabase } from "./utils/databases.js"

forEachDatabase((database) =>
  describe(`OrganizationRepoSql (${database.name})`, () => {
    it.effect("round-trips an organization, its timestamp as RFC 3339 with a zone", () =>
      Effect.gen(function*() {
        const repo = yield* OrganizationRepo
        const org = new Organization({
          id: OrganizationId.make(Fixtures.uuid()),
          name: "Acme",
          created_at: DateTime.unsafeMake("2024-05-06T07:08:09.123Z")
        })
        yield* repo.create(org)
        const read = yield* repo.get(org.id)
        expect(read).toEqual(Option.some(org))
        expect(Schema.encodeSync(Organization)(Option.getOrThrow(read)).created_at).toBe("2024-05-06T07:08:09.123Z")
      }).pipe(Effect.provide(database.shared)))

    it.effect("stores timestamps as timestamptz, in the same instant whatever the session time zone", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const prefix = yield* TablePrefix
        const [column] = yield* sql<{ data_type: string }>`
          SELECT data_type FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = ${prefix.name("organizations")}
            AND column_name = 'created_at'`
        expect(column.data_type).toBe("timestamp with time zone")

        const repo = yield* OrganizationRepo
        const created_at = DateTime.unsafeMake("2023-12-31T23:30:00.000Z")
        const org = new Organization({ id: OrganizationId.make(Fixtures.uuid()), name: "Zone", created_at })
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SET LOCAL TIME ZONE 'Pacific/Auckland'`
          yield* repo.create(org)
          const read = Option.getOrThrow(yield* repo.get(org.id))
          expect(DateTime.toEpochMillis(read.created_at)).toBe(DateTime.toEpochMillis(created_at))
        }))
      }).pipe(Effect.provide(database.shared)))

    it.effect("get of an unknown id is none", () =>
      Effect.gen(function*() {
        const repo = yield* OrganizationRepo
        expect(yield* repo.get(OrganizationId.make(Fixtures.uuid()))).toEqual(Option.none())
      }).pipe(Effect.provide(database.shared)))

    it.effect("lists oldest first, ties broken by id", () =>
      Effect.gen(function*() {
        const repo = yield* OrganizationRepo
        const at = (iso: string) => DateTime.unsafeMake(iso)
        const make = (id: string, created: string) =>
          new Organization({ id: OrganizationId.make(id), name: id.slice(0, 8), created_at: at(created) })
        // One random uuid with four leading digits: id order is the reverse of creation order.
        const base = Fixtures.uuid().slice(1)
        const newest = make(`1${base}`, "2001-01-03T00:00:00.000Z")
        const tieLow = make(`2${base}`, "2001-01-02T00:00:00.000Z")
        const tieHigh = make(`3${base}`, "2001-01-02T00:00:00.000Z")
        const oldest = make(`4${base}`, "2001-01-01T00:00:00.000Z")
        yield* Effect.forEach([newest, tieHigh, oldest, tieLow], repo.create)
        const mine = new Set([newest, tieLow, tieHigh, oldest].map((o) => o.id))
        const listed = (yield* repo.list).filter((o) => mine.has(o.id))
        expect(listed.map((o) => o.id)).toEqual([oldest.id, tieLow.id, tieHigh.id, newest.id])
      }).pipe(Effect.provide(database.shared)))
  })
)
