/**
 * What the ConnectorRepo contract cannot show, on real databases:
 * - connector ids are integers from an identity: increasing, never reused after a delete, nor after
 *   a rolled-back create, and distinct under concurrent creates;
 * - a reader racing `setAccess` sees one whole access, never the flag of one and the grants of another;
 * - where the password is stored (the decision recorded in ConnectorRepoSql), so a change to it is
 *   a visible change to this test.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Connector from "@sightline/core/Connector"
import { ConnectorRepo } from "@sightline/core/ConnectorRepo"
import type { MemberId, OrganizationId } from "@sightline/core/Ids"
import { Fixtures } from "@sightline/core/testing"
import { Transaction } from "@sightline/core/Transaction"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { TablePrefix } from "../src/TablePrefix.js"
import { forEachDatabase } from "./utils/databases.js"

const base = DateTime.unsafeMake("2026-02-01T08:00:00.000Z")

const config = (password: string) =>
  Schema.decodeUnknownSync(Connector.ConnectorConfig)({
    connector_type: "POSTGRES",
    name: "warehouse",
    postgres: { host: "db.internal", user: "analyst", password, database: "dw" }
  })

const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  return { org, member }
})

const create = (organizationId: OrganizationId, ownerId: MemberId, password = "pw") =>
  Effect.flatMap(ConnectorRepo, (repo) =>
    repo.create(
      Connector.make({ organizationId, ownerId, config: config(password), at: base }),
      Connector.initialAccess(ownerId)
    ))

const encodeAccess = (access: Connector.ConnectorAccess) =>
  JSON.stringify(Schema.encodeSync(Connector.ConnectorAccess)(access))

forEachDatabase((database) =>
  describe(`ConnectorRepoSql (${database.name})`, () => {
    it.effect("ids come from an integer identity that the database alone assigns", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const prefix = yield* TablePrefix
        const column = yield* sql<{ data_type: string; is_identity: string; identity_generation: string }>`
          SELECT data_type, is_identity, identity_generation FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = ${prefix.name("connectors")} AND column_name = 'id'`
        expect(column).toEqual([{ data_type: "integer", is_identity: "YES", identity_generation: "ALWAYS" }])
      }).pipe(Effect.provide(database.shared)))

    it.effect("an id is never handed out twice: not after a delete, not after a rolled-back create", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const tx = yield* Transaction
        const { member, org } = yield* setup
        const first = yield* create(org.id, member.id)
        yield* repo.delete(org.id, first.id)
        const second = yield* create(org.id, member.id)
        expect(second.id).toBeGreaterThan(first.id)
        let rolledBack = 0
        yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
          rolledBack = (yield* create(org.id, member.id)).id
          return yield* Effect.fail("boom")
        })))
        expect(rolledBack).toBeGreaterThan(second.id)
        expect(yield* repo.get(org.id, first.id)).toEqual(Option.none())
        const third = yield* create(org.id, member.id)
        expect(third.id).toBeGreaterThan(rolledBack)
        expect(Number.isInteger(third.id)).toBe(true)
        expect((yield* repo.list(org.id)).map((c) => c.id)).toEqual([second.id, third.id])
      }).pipe(Effect.provide(database.shared)))

    it.live("concurrent creates get distinct ids, and every one is stored with its access", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const { member, org } = yield* setup
        const created = yield* Effect.all(Arr.makeBy(16, () => create(org.id, member.id)), { concurrency: "unbounded" })
        const ids = created.map((c) => c.id)
        expect(new Set(ids).size).toBe(16)
        expect((yield* repo.list(org.id)).map((c) => c.id)).toEqual([...ids].sort((a, b) => a - b))
        const listed = yield* repo.listWithAccess(org.id)
        expect(listed.map(({ access }) => encodeAccess(access))).toEqual(
          Arr.makeBy(16, () => encodeAccess(Connector.initialAccess(member.id)))
        )
      }).pipe(Effect.provide(database.shared)), 30_000)

    it.live("a reader racing setAccess sees one whole access, never a mix of two", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const { member, org } = yield* setup
        const colleagues = yield* Effect.forEach(Arr.range(1, 4), () => Fixtures.member(org.id))
        const connector = yield* create(org.id, member.id)
        // Each access differs in its flag and in every grant, so a mix of two is recognisable.
        const accesses = colleagues.map((colleague, i) =>
          new Connector.ConnectorAccess({
            is_public: i % 2 === 0,
            grants: Arr.makeBy(i + 1, (j) =>
              new Connector.AccessGrant({
                member_id: j === 0 ? colleague.id : colleagues[(i + j) % colleagues.length]!.id,
                access_type: j === 0 ? "owner" : "viewer",
                granted_by: member.id,
                expires_at: DateTime.add(base, { hours: i })
              }))
          })
        )
        const valid = new Set([Connector.initialAccess(member.id), ...accesses].map(encodeAccess))
        const writes = Effect.forEach(
          Arr.range(1, 5),
          () => Effect.forEach(accesses, (access) => repo.setAccess(org.id, connector.id, access), { discard: true }),
          {
            discard: true
          }
        )
        const reads = Effect.forEach(
          Arr.range(1, 60),
          () => Effect.map(repo.getAccess(org.id, connector.id), (access) => encodeAccess(Option.getOrThrow(access)))
        )
        const [, seen] = yield* Effect.all([writes, reads], { concurrency: "unbounded" })
        for (const access of seen) expect(valid.has(access)).toBe(true)
      }).pipe(Effect.provide(database.shared)), 60_000)

    it.effect("the password is stored once, as the plain string in the configuration's JSON", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const prefix = yield* TablePrefix
        const { member, org } = yield* setup
        const password = `pw-${Fixtures.uuid()}`
        const connector = yield* create(org.id, member.id, password)
        const rows = yield* sql<{ password: string; grants: string }>`
          SELECT c.config -> 'postgres' ->> 'password' AS password,
                 coalesce((SELECT string_agg(g::text, ' ') FROM ${sql(prefix.name("connector_grants"))} g
                           WHERE g.connector_id = c.id), '') AS grants
          FROM ${sql(prefix.name("connectors"))} c WHERE c.id = ${connector.id}`
        expect(rows).toEqual([{ password, grants: expect.not.stringContaining(password) }])
      }).pipe(Effect.provide(database.shared)))
  })
)
