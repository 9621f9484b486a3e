/**
 * The contract every `ConnectorRepo` implementation must meet.
 *
 * It runs on a shared, non-empty database: each test makes its own organizations and members with
 * random ids and never assumes a table is empty (nor that connector ids start anywhere).
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Connector from "../Connector.js"
import { ConnectorRepo } from "../ConnectorRepo.js"
import { ConnectorId, type MemberId, type OrganizationId, RoleId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import { Transaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

/**
 * Every port the suite needs (the SQL adapter's foreign keys need organizations and members).
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = ConnectorRepo | OrganizationRepo | MemberRepo | Transaction

const base = DateTime.unsafeMake("2026-01-15T09:30:00.123Z")
const at = (seconds: number) => DateTime.add(base, { seconds })

// Records are compared in their encoded form: the password is `Redacted`, which only its encoding
// exposes, and timestamps compare as the strings they store.
const encode = (record: Connector.ConnectorRecord) => Schema.encodeSync(Connector.ConnectorRecord)(record)
const encodeAccess = (access: Connector.ConnectorAccess) => Schema.encodeSync(Connector.ConnectorAccess)(access)

const postgres = (name = "warehouse", password = "s3cret — ünïcode") =>
  Schema.decodeUnknownSync(Connector.ConnectorConfig)({
    connector_type: "POSTGRES",
    name,
    postgres: {
      host: "db.internal",
      port: 6543,
      user: "analyst",
      password,
      database: "dw",
      schemas: ["public", "sales"],
      ssl_mode: "verify-full"
    }
  })

const demo = Schema.decodeUnknownSync(Connector.ConnectorConfig)({ connector_type: "DEMO", name: "Demo", demo: {} })

const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  return { org, member }
})

const draft = (
  organizationId: OrganizationId,
  ownerId: MemberId,
  config: Connector.ConnectorConfig = postgres()
): Connector.NewConnector => Connector.make({ organizationId, ownerId, config, at: base })

const create = (organizationId: OrganizationId, ownerId: MemberId, config?: Connector.ConnectorConfig) =>
  Effect.flatMap(
    ConnectorRepo,
    (repo) => repo.create(draft(organizationId, ownerId, config), Connector.initialAccess(ownerId))
  )

/**
 * Registers the `ConnectorRepo` contract suite against `layer`.
 *
 * @since 0.1.0
 * @category utils
 */
export const connectorRepoContract = (name: string, layer: Layer.Layer<Requirements, unknown>): void => {
  describe(name, () => {
    it.effect("create assigns an id and get round-trips every field, password included", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const { member, org } = yield* setup
        const full = new Connector.ConnectorRecord({
          ...draft(org.id, member.id),
          id: ConnectorId.make(1),
          allow_sql_write_operations: true,
          include_db_session_metadata: true,
          updated_at: at(30)
        })
        const { id: _ignored, ...input } = full
        const created = yield* repo.create(input, Connector.initialAccess(member.id))
        expect(encode(created)).toEqual({ ...encode(full), id: created.id })
        expect(Option.map(yield* repo.get(org.id, created.id), encode)).toEqual(Option.some(encode(created)))
        expect(Option.map(yield* repo.getForUpdate(org.id, created.id), encode)).toEqual(Option.some(encode(created)))
        const minimal = yield* create(org.id, member.id, demo)
        expect(Option.map(yield* repo.get(org.id, minimal.id), encode)).toEqual(Option.some(encode(minimal)))
      }).pipe(Effect.provide(layer)))

    it.effect("ids are positive, increasing and never repeat across organizations", () =>
      Effect.gen(function*() {
        const a = yield* setup
        const b = yield* setup
        const ids = []
        for (const owner of [a, b, a, b]) ids.push((yield* create(owner.org.id, owner.member.id)).id)
        expect(ids.every((id) => Number.isInteger(id) && id > 0)).toBe(true)
        expect([...ids].sort((x, y) => x - y)).toEqual(ids)
        expect(new Set(ids).size).toBe(ids.length)
      }).pipe(Effect.provide(layer)))

    it.effect("get, getForUpdate and getAccess see only the connector's own organization", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const created = yield* create(org.id, member.id)
        expect(Option.isNone(yield* repo.get(other.org.id, created.id))).toBe(true)
        expect(Option.isNone(yield* repo.getForUpdate(other.org.id, created.id))).toBe(true)
        expect(Option.isNone(yield* repo.getAccess(other.org.id, created.id))).toBe(true)
        expect(Option.isSome(yield* repo.getAccess(org.id, created.id))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("list returns the organization's connectors by id", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const first = yield* create(org.id, member.id, postgres("b"))
        yield* create(other.org.id, other.member.id)
        const second = yield* create(org.id, member.id, demo)
        const third = yield* create(org.id, member.id, postgres("a"))
        expect((yield* repo.list(org.id)).map(encode)).toEqual([first, second, third].map(encode))
        expect(yield* repo.list((yield* Fixtures.organization()).id)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("listWithAccess pairs each of the organization's connectors with its access, by id", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const first = yield* create(org.id, member.id, postgres("b"))
        yield* create(other.org.id, other.member.id)
        const second = yield* create(org.id, member.id, demo)
        const shared = new Connector.ConnectorAccess({
          is_public: true,
          grants: [new Connector.AccessGrant({ member_id: member.id, access_type: "editor", granted_by: member.id })]
        })
        yield* repo.setAccess(org.id, second.id, shared)
        const listed = yield* repo.listWithAccess(org.id)
        expect(listed.map(({ access, connector }) => [encode(connector), encodeAccess(access)])).toEqual([
          [encode(first), encodeAccess(Connector.initialAccess(member.id))],
          [encode(second), encodeAccess(shared)]
        ])
        expect(yield* repo.listWithAccess((yield* Fixtures.organization()).id)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("update replaces the stored connector", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const { member, org } = yield* setup
        const created = yield* create(org.id, member.id)
        const updated = new Connector.ConnectorRecord({
          ...created,
          config: postgres("renamed", "n3w"),
          allow_sql_write_operations: true,
          updated_at: at(60)
        })
        yield* repo.update(updated)
        expect(Option.map(yield* repo.get(org.id, created.id), encode)).toEqual(Option.some(encode(updated)))
        expect((yield* repo.list(org.id)).map((c) => c.config.name)).toEqual(["renamed"])
      }).pipe(Effect.provide(layer)))

    it.effect("update of a connector that is absent or in another organization is NotFound and changes nothing", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const created = yield* create(org.id, member.id)
        const hijack = new Connector.ConnectorRecord({ ...created, organization_id: other.org.id, config: demo })
        expect((yield* Effect.flip(repo.update(hijack)))._tag).toBe("NotFound")
        expect(Option.map(yield* repo.get(org.id, created.id), encode)).toEqual(Option.some(encode(created)))
        expect(yield* repo.list(other.org.id)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("delete removes the connector and its access; ids are not reused", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const kept = yield* create(org.id, member.id)
        const doomed = yield* create(org.id, member.id)
        expect((yield* Effect.flip(repo.delete(other.org.id, doomed.id)))._tag).toBe("NotFound")
        expect(Option.isSome(yield* repo.get(org.id, doomed.id))).toBe(true)
        yield* repo.delete(org.id, doomed.id)
        expect(Option.isNone(yield* repo.get(org.id, doomed.id))).toBe(true)
        expect(Option.isNone(yield* repo.getAccess(org.id, doomed.id))).toBe(true)
        expect((yield* repo.list(org.id)).map((c) => c.id)).toEqual([kept.id])
        expect((yield* Effect.flip(repo.delete(org.id, doomed.id)))._tag).toBe("NotFound")
        expect((yield* create(org.id, member.id)).id).toBeGreaterThan(doomed.id)
      }).pipe(Effect.provide(layer)))

    it.effect("setAccess replaces the whole access; every grant field round-trips", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const { member, org } = yield* setup
        const colleague = yield* Fixtures.member(org.id)
        const role = RoleId.make(Fixtures.uuid())
        const created = yield* create(org.id, member.id)
        expect(Option.map(yield* repo.getAccess(org.id, created.id), encodeAccess)).toEqual(
          Option.some(encodeAccess(Connector.initialAccess(member.id)))
        )
        const wide = new Connector.ConnectorAccess({
          is_public: true,
          grants: [
            new Connector.AccessGrant({ member_id: member.id, access_type: "owner", granted_by: member.id }),
            new Connector.AccessGrant({ role_id: role, access_type: "viewer", granted_by: member.id }),
            new Connector.AccessGrant({
              member_id: colleague.id,
              access_type: "editor",
              granted_by: member.id,
              expires_at: at(3600)
            })
          ]
        })
        yield* repo.setAccess(org.id, created.id, wide)
        expect(Option.map(yield* repo.getAccess(org.id, created.id), encodeAccess)).toEqual(
          Option.some(encodeAccess(wide))
        )
        const narrow = new Connector.ConnectorAccess({
          is_public: false,
          grants: [new Connector.AccessGrant({ member_id: colleague.id, access_type: "owner", granted_by: member.id })]
        })
        yield* repo.setAccess(org.id, created.id, narrow)
        expect(Option.map(yield* repo.getAccess(org.id, created.id), encodeAccess)).toEqual(
          Option.some(encodeAccess(narrow))
        )
      }).pipe(Effect.provide(layer)))

    it.effect("setAccess on a connector of another organization is NotFound and changes nothing", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const created = yield* create(org.id, member.id)
        const takeover = new Connector.ConnectorAccess({ is_public: true, grants: [] })
        expect((yield* Effect.flip(repo.setAccess(other.org.id, created.id, takeover)))._tag).toBe("NotFound")
        expect(Option.map(yield* repo.getAccess(org.id, created.id), encodeAccess)).toEqual(
          Option.some(encodeAccess(Connector.initialAccess(member.id)))
        )
      }).pipe(Effect.provide(layer)))

    it.effect("a failed transaction leaves no connector, update or access change behind", () =>
      Effect.gen(function*() {
        const repo = yield* ConnectorRepo
        const tx = yield* Transaction
        const { member, org } = yield* setup
        const existing = yield* create(org.id, member.id)
        let createdId: ConnectorId | undefined
        const exit = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
          const created = yield* create(org.id, member.id, demo)
          createdId = created.id
          yield* repo.setAccess(org.id, created.id, new Connector.ConnectorAccess({ is_public: true, grants: [] }))
          yield* repo.setAccess(org.id, existing.id, new Connector.ConnectorAccess({ is_public: true, grants: [] }))
          yield* repo.update(new Connector.ConnectorRecord({ ...existing, config: demo, updated_at: at(5) }))
          return yield* Effect.fail("boom" as const)
        })))
        expect(exit._tag).toBe("Failure")
        expect(createdId).toBeDefined()
        expect(Option.isNone(yield* repo.get(org.id, createdId!))).toBe(true)
        expect((yield* repo.list(org.id)).map(encode)).toEqual([encode(existing)])
        expect(Option.map(yield* repo.getAccess(org.id, existing.id), encodeAccess)).toEqual(
          Option.some(encodeAccess(Connector.initialAccess(member.id)))
        )
      }).pipe(Effect.provide(layer)))
  })
}
