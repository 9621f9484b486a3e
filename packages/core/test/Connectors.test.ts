import { describe, expect, it } from "@effect/vitest"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as AgentRepo from "../src/AgentRepo.js"
import * as AuditLogRepo from "../src/AuditLogRepo.js"
import * as Auditor from "../src/Auditor.js"
import * as Auth from "../src/Auth.js"
import * as Connector from "../src/Connector.js"
import * as ConnectorFiles from "../src/ConnectorFiles.js"
import * as ConnectorRepo from "../src/ConnectorRepo.js"
import * as Connectors from "../src/Connectors.js"
import * as ConnectorTester from "../src/ConnectorTester.js"
import * as IdGenerator from "../src/IdGenerator.js"
import { ApiKeyId, ConnectorId, MemberId, type OrganizationId, RoleId } from "../src/Ids.js"
import type { Member } from "../src/Member.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import * as Permission from "../src/Permission.js"
import * as PlaybookRepo from "../src/PlaybookRepo.js"
import * as Policy from "../src/Policy.js"
import * as Role from "../src/Role.js"
import * as RoleRepo from "../src/RoleRepo.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Transaction from "../src/Transaction.js"

// Every configuration the tester was asked to try, so tests can see what `test` really sent.
class Tested extends Context.Tag("test/Tested")<Tested, Ref.Ref<ReadonlyArray<Connector.ConnectorConfig>>>() {}

// The memory tester, recording its inputs.
const recordingTester = Layer.effect(
  ConnectorTester.ConnectorTester,
  Effect.gen(function*() {
    const tested = yield* Tested
    const memory = yield* Effect.provide(ConnectorTester.ConnectorTester, ConnectorTester.layerMemory)
    return {
      test: (config: Connector.ConnectorConfig) =>
        Effect.zipRight(Ref.update(tested, Arr.append(config)), memory.test(config))
    }
  })
).pipe(Layer.provideMerge(Layer.effect(Tested, Ref.make<ReadonlyArray<Connector.ConnectorConfig>>([]))))

// The memory ports this service needs, built directly (testing/Memory.ts pulls in modules others
// are still writing).
const repositories = Layer.mergeAll(
  OrganizationRepo.layerMemory,
  MemberRepo.layerMemory,
  RoleRepo.layerMemory,
  AuditLogRepo.layerMemory,
  ConnectorRepo.layerMemory,
  AgentRepo.layerMemory,
  PlaybookRepo.layerMemory
).pipe(Layer.provideMerge(Layer.merge(Transaction.layerMemory, IdGenerator.layerTest)))

// FILES connectors: 100 bytes a file, 250 an organization.
const TestLayer = Connectors.layer.pipe(
  Layer.provideMerge(Auditor.layer),
  Layer.provideMerge(Layer.mergeAll(
    repositories,
    recordingTester,
    ConnectorFiles.layerMemory({ maxFileBytes: 100, maxOrganizationBytes: 250 })
  ))
)

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) =>
  Effect.provide(effect, TestLayer)

const PASSWORD = "s3cret-pa55"

const postgresRequest = (name = "Warehouse", access?: unknown) =>
  Schema.decodeUnknownSync(Connector.CreateConnectorRequest)({
    config: {
      connector_type: "POSTGRES",
      name,
      postgres: { host: "db.internal", user: "analyst", password: PASSWORD, database: "dw" }
    },
    ...(access === undefined ? {} : { access })
  })

const demoRequest = (name = "Demo") =>
  Schema.decodeUnknownSync(Connector.CreateConnectorRequest)({
    config: { connector_type: "DEMO", name, demo: {} }
  })

const updateRequest = (postgres: Record<string, unknown>, extra: Record<string, unknown> = {}, name = "Warehouse") =>
  Schema.decodeUnknownSync(Connector.UpdateConnectorRequest)({
    config: {
      connector_type: "POSTGRES",
      name,
      postgres: { host: "db.internal", user: "analyst", database: "dw", ...postgres }
    },
    ...extra
  })

// A session by default, as `Auth` builds principals.
const principalOf = (member: Member, roles: ReadonlyArray<Role.RoleRecord>, auth = Policy.Session()) =>
  Auth.principalOf(member, roles, auth)

const customRole = (organizationId: OrganizationId, name: string, permissions: ReadonlyArray<Permission.Permission>) =>
  Effect.gen(function*() {
    const role = Role.make({
      id: RoleId.make(Fixtures.uuid()),
      organizationId,
      request: { name, permissions },
      now: yield* DateTime.now
    })
    yield* Effect.orDie((yield* RoleRepo.RoleRepo).create(role))
    return role
  })

// An organization with an admin (who manages connectors), two connector managers (`connector:*`
// without admin) and a plain member (`connector:read` only, through the `member` system role).
const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const system = Role.systemRoles({
    organizationId: org.id,
    adminId: RoleId.make(Fixtures.uuid()),
    memberId: RoleId.make(Fixtures.uuid()),
    now: yield* DateTime.now
  })
  const roles = yield* RoleRepo.RoleRepo
  yield* Effect.orDie(roles.create(system.admin))
  yield* Effect.orDie(roles.create(system.member))
  const managers = yield* customRole(org.id, "Connector managers", ["connector:read", "connector:write"])
  const readers = yield* customRole(org.id, "Readers", ["connector:read"])
  const adminMember = yield* Fixtures.member(org.id)
  const annMember = yield* Fixtures.member(org.id)
  const benMember = yield* Fixtures.member(org.id)
  const bobMember = yield* Fixtures.member(org.id)
  return {
    org,
    system,
    managers,
    readers,
    adminMember,
    annMember,
    benMember,
    bobMember,
    admin: principalOf(adminMember, [system.admin]),
    ann: principalOf(annMember, [managers]),
    ben: principalOf(benMember, [managers]),
    bob: principalOf(bobMember, [system.member])
  }
})

const auditEntries = (organizationId: OrganizationId) =>
  Effect.map(
    Effect.flatMap(AuditLogRepo.AuditLogRepo, (repo) => repo.list(organizationId, { limit: 100 })),
    (page) => page.items
  )

const storedPassword = (organizationId: OrganizationId, id: ConnectorId) =>
  Effect.gen(function*() {
    const record = Option.getOrThrow(yield* (yield* ConnectorRepo.ConnectorRepo).get(organizationId, id))
    return record.config.connector_type === "POSTGRES" ? Redacted.value(record.config.postgres.password) : undefined
  })

const encodeAccess = Schema.encodeSync(Connector.ConnectorAccess)

describe("ConnectorTester.layerMemory", () => {
  it.effect("the demo type connects; any other type says no driver is available in memory", () =>
    Effect.gen(function*() {
      const tester = yield* ConnectorTester.ConnectorTester
      expect(yield* tester.test(demoRequest().config)).toEqual({ success: true })
      expect(yield* tester.test(postgresRequest().config)).toEqual({
        success: false,
        error: "no POSTGRES driver is available in memory"
      })
    }).pipe(Effect.provide(ConnectorTester.layerMemory)))
})

describe("Connectors.create", () => {
  it.effect("answers {id, name, type}; the caller owns a private connector; the change is audited without secrets", () =>
    run(Effect.gen(function*() {
      const { ann, annMember, org } = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(ann, postgresRequest())
      expect({ ...created }).toEqual({ id: expect.any(Number), name: "Warehouse", type: "POSTGRES" })
      expect(encodeAccess(yield* service.getAccess(ann, created.id))).toEqual({
        is_public: false,
        grants: [{ member_id: annMember.id, access_type: "owner", granted_by: annMember.id }]
      })
      expect(yield* storedPassword(org.id, created.id)).toBe(PASSWORD)
      const entries = yield* auditEntries(org.id)
      expect(entries.map((e) => [e.action, e.resource_type, e.resource_id, e.actor_id, e.auth_method])).toEqual([
        ["connector.create", "connector", String(created.id), annMember.id, "jwt"]
      ])
      expect(entries[0]!.details).toMatchObject({ name: "Warehouse", connector_type: "POSTGRES", is_public: false })
      expect(JSON.stringify(entries[0]!.details)).not.toContain(PASSWORD)
    })))

  it.effect("adds the requested grants, granted by the caller, and may make the connector public", () =>
    run(Effect.gen(function*() {
      const { ann, annMember, bobMember, readers } = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(
        ann,
        postgresRequest("Shared", {
          is_public: true,
          grants: [
            { member_id: bobMember.id, access_type: "editor" },
            { role_id: readers.id, access_type: "viewer" },
            // The caller's own grant is its owner grant: a weaker one is not added beside it.
            { member_id: annMember.id, access_type: "viewer" }
          ]
        })
      )
      expect(encodeAccess(yield* service.getAccess(ann, created.id))).toEqual({
        is_public: true,
        grants: [
          { member_id: annMember.id, access_type: "owner", granted_by: annMember.id },
          { member_id: bobMember.id, access_type: "editor", granted_by: annMember.id },
          { role_id: readers.id, access_type: "viewer", granted_by: annMember.id }
        ]
      })
    })))

  it.effect("needs connector:write", () =>
    run(Effect.gen(function*() {
      const { bob, org } = yield* setup
      const service = yield* Connectors.Connectors
      const error = yield* Effect.flip(service.create(bob, demoRequest()))
      expect(error).toMatchObject({ _tag: "PermissionDenied", message: "permission denied: connector:write required" })
      expect(yield* (yield* ConnectorRepo.ConnectorRepo).list(org.id)).toEqual([])
    })))

  it.effect("grants may name only live members and roles of the organization (InvalidRequest, nothing stored)", () =>
    run(Effect.gen(function*() {
      const { ann, org } = yield* setup
      const other = yield* setup
      const service = yield* Connectors.Connectors
      const gone = yield* Fixtures.member(org.id)
      yield* Effect.orDie((yield* MemberRepo.MemberRepo).softDelete(org.id, gone.id, yield* DateTime.now))
      const cases = [
        [{ member_id: MemberId.make(Fixtures.uuid()), access_type: "viewer" }, "is not a member of this organization"],
        [{ member_id: other.annMember.id, access_type: "viewer" }, "is not a member of this organization"],
        [{ member_id: gone.id, access_type: "viewer" }, "is not a member of this organization"],
        [{ role_id: RoleId.make(Fixtures.uuid()), access_type: "viewer" }, "is not a role of this organization"],
        [{ role_id: other.readers.id, access_type: "viewer" }, "is not a role of this organization"]
      ] as const
      for (const [grant, message] of cases) {
        const error = yield* Effect.flip(
          service.create(ann, postgresRequest("X", { is_public: false, grants: [grant] }))
        )
        expect(error._tag).toBe("InvalidRequest")
        expect(error.message).toContain(message)
      }
      expect(yield* (yield* ConnectorRepo.ConnectorRepo).list(org.id)).toEqual([])
    })))
})

describe("Connectors.list and types", () => {
  it.effect("lists the connectors the caller can use: owned, granted to it or its roles, public", () =>
    run(Effect.gen(function*() {
      const { admin, ann, bob, bobMember, system } = yield* setup
      const other = yield* setup
      const service = yield* Connectors.Connectors
      yield* service.create(ann, demoRequest("Own"))
      const direct = yield* service.create(
        admin,
        postgresRequest("Direct", { is_public: false, grants: [{ member_id: bobMember.id, access_type: "viewer" }] })
      )
      const viaRole = yield* service.create(
        admin,
        postgresRequest("Via role", {
          is_public: false,
          grants: [{ role_id: system.member.id, access_type: "viewer" }]
        })
      )
      yield* service.create(
        admin,
        postgresRequest("Expired", {
          is_public: false,
          grants: [{ member_id: bobMember.id, access_type: "viewer", expires_at: "1969-12-31T00:00:00Z" }]
        })
      )
      const open = yield* service.create(admin, postgresRequest("Public", { is_public: true, grants: [] }))
      yield* service.create(admin, postgresRequest("Private"))
      yield* service.create(other.admin, postgresRequest("Elsewhere", { is_public: true, grants: [] }))
      const names = (list: Connector.ListConnectorsResponse) => list.map((c) => c.name)
      expect(names(yield* service.list(bob))).toEqual(["Direct", "Via role", "Public"])
      expect(names(yield* service.list(ann))).toEqual(["Own", "Public"])
      expect((yield* service.list(bob)).map((c) => ({ ...c }))).toEqual([
        { id: direct.id, name: "Direct", type: "POSTGRES" },
        { id: viaRole.id, name: "Via role", type: "POSTGRES" },
        { id: open.id, name: "Public", type: "POSTGRES" }
      ])
    })))

  it.effect("a key without full member access loses direct shares but keeps what its owner created", () =>
    run(Effect.gen(function*() {
      const { admin, ann, annMember, managers } = yield* setup
      const service = yield* Connectors.Connectors
      yield* service.create(ann, demoRequest("Created by Ann"))
      yield* service.create(
        admin,
        postgresRequest("Shared with Ann", {
          is_public: false,
          grants: [{ member_id: annMember.id, access_type: "viewer" }]
        })
      )
      const key = (fullMemberAccess: boolean) =>
        principalOf(
          annMember,
          [managers],
          Policy.ApiKey({
            keyId: ApiKeyId.make(Fixtures.uuid()),
            assumedRoleIds: [managers.id],
            inheritAllRoles: false,
            fullMemberAccess
          })
        )
      expect((yield* service.list(key(false))).map((c) => c.name)).toEqual(["Created by Ann"])
      expect((yield* service.list(key(true))).map((c) => c.name)).toEqual(["Created by Ann", "Shared with Ann"])
    })))

  it.effect("list and types need connector:read", () =>
    run(Effect.gen(function*() {
      const { org } = yield* setup
      const service = yield* Connectors.Connectors
      const nobody = principalOf(yield* Fixtures.member(org.id), [])
      expect((yield* Effect.flip(service.list(nobody)))._tag).toBe("PermissionDenied")
      expect((yield* Effect.flip(service.types(nobody)))._tag).toBe("PermissionDenied")
    })))

  it.effect("types describes every type from the schemas, the password confidential and optional on update", () =>
    run(Effect.gen(function*() {
      const { bob } = yield* setup
      const { types } = yield* (yield* Connectors.Connectors).types(bob)
      expect(types.map((t) => [t.connector_type, t.config_key])).toEqual([
        ["POSTGRES", "postgres"],
        ["MYSQL", "mysql"],
        ["DEMO", "demo"]
      ])
      expect(types[0]!.fields.find((f) => f.name === "password")).toEqual({
        name: "password",
        type: "string",
        confidential: true,
        optional_on_update: true
      })
      expect(types[0]!.fields.filter((f) => f.confidential).map((f) => f.name)).toEqual([
        "password",
        "client_attributes_secret"
      ])
    })))
})

describe("Connectors.test", () => {
  it.effect("tries a new configuration (connector:write); a failed connection is still an answer", () =>
    run(Effect.gen(function*() {
      const { ann, bob } = yield* setup
      const service = yield* Connectors.Connectors
      expect(yield* service.test(ann, { config: demoRequest().config })).toEqual({ success: true })
      const noPassword = updateRequest({}).config
      expect(yield* service.test(ann, { config: noPassword })).toEqual({
        success: false,
        error: "no POSTGRES driver is available in memory"
      })
      // Without a stored connector a missing password is empty, not absent.
      const tried = yield* Ref.get(yield* Tested)
      expect(tried[1]!.connector_type === "POSTGRES" && Redacted.value(tried[1]!.postgres.password)).toBe("")
      expect((yield* Effect.flip(service.test(bob, { config: demoRequest().config })))._tag).toBe("PermissionDenied")
    })))

  it.effect("with connector_id, an empty or missing password is the stored one; a sent one wins", () =>
    run(Effect.gen(function*() {
      const { ann } = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(ann, postgresRequest())
      yield* service.test(ann, { config: updateRequest({ host: "db2.internal" }).config, connector_id: created.id })
      yield* service.test(ann, { config: updateRequest({ password: "" }).config, connector_id: created.id })
      yield* service.test(ann, { config: updateRequest({ password: "typed" }).config, connector_id: created.id })
      const tried = (yield* Ref.get(yield* Tested)).map((config) =>
        config.connector_type === "POSTGRES" ? [config.postgres.host, Redacted.value(config.postgres.password)] : []
      )
      expect(tried).toEqual([["db2.internal", PASSWORD], ["db.internal", PASSWORD], ["db.internal", "typed"]])
    })))

  it.effect("with connector_id: needs editor access (a viewer could send the password anywhere), hidden is NotFound", () =>
    run(Effect.gen(function*() {
      const { ann, ben, benMember } = yield* setup
      const other = yield* setup
      const service = yield* Connectors.Connectors
      const viewed = yield* service.create(
        ann,
        postgresRequest("Viewed", { is_public: false, grants: [{ member_id: benMember.id, access_type: "viewer" }] })
      )
      const hidden = yield* service.create(ann, postgresRequest("Hidden"))
      const config = updateRequest({ host: "attacker.example" }).config
      expect(yield* Effect.flip(service.test(ben, { config, connector_id: viewed.id }))).toMatchObject({
        _tag: "PermissionDenied",
        message: "permission denied: editor access required"
      })
      expect(yield* Effect.flip(service.test(ben, { config, connector_id: hidden.id }))).toMatchObject({
        _tag: "NotFound",
        message: "Resource not found"
      })
      expect((yield* Effect.flip(service.test(other.admin, { config, connector_id: hidden.id })))._tag).toBe(
        "NotFound"
      )
      expect((yield* Effect.flip(service.test(ann, { config, connector_id: ConnectorId.make(999_999) })))._tag)
        .toBe("NotFound")
      expect(yield* Ref.get(yield* Tested)).toEqual([])
    })))

  it.effect("with connector_id, another type is InvalidRequest", () =>
    run(Effect.gen(function*() {
      const { ann } = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(ann, postgresRequest())
      const error = yield* Effect.flip(service.test(ann, { config: demoRequest().config, connector_id: created.id }))
      expect(error._tag).toBe("InvalidRequest")
      expect(error.message).toContain("connector_type cannot change")
    })))
})

describe("Connectors.update", () => {
  it.effect("an editor replaces the configuration; an empty or missing password keeps the stored one", () =>
    run(Effect.gen(function*() {
      const { ann, ben, benMember, org } = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(
        ann,
        postgresRequest("Warehouse", { is_public: false, grants: [{ member_id: benMember.id, access_type: "editor" }] })
      )
      const moved = yield* service.update(ben, created.id, updateRequest({ host: "db2.internal", password: "" }))
      expect({ ...moved }).toEqual({ id: created.id, name: "Warehouse", type: "POSTGRES" })
      expect(yield* storedPassword(org.id, created.id)).toBe(PASSWORD)
      const renamed = yield* service.update(
        ben,
        created.id,
        updateRequest({ host: "db3.internal" }, { allow_sql_write_operations: true }, "Renamed")
      )
      expect(renamed.name).toBe("Renamed")
      const stored = Option.getOrThrow(yield* (yield* ConnectorRepo.ConnectorRepo).get(org.id, created.id))
      expect(stored.allow_sql_write_operations).toBe(true)
      expect(stored.include_db_session_metadata).toBe(false)
      expect(stored.config.connector_type === "POSTGRES" && stored.config.postgres.host).toBe("db3.internal")
      expect(yield* storedPassword(org.id, created.id)).toBe(PASSWORD)
      yield* service.update(ben, created.id, updateRequest({ host: "db3.internal", password: "n3w" }, {}, "Renamed"))
      expect(yield* storedPassword(org.id, created.id)).toBe("n3w")
    })))

  it.effect("audits the names of what changed, never a password; a patch that changes nothing writes nothing", () =>
    run(Effect.gen(function*() {
      const { ann, org } = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(ann, postgresRequest())
      yield* service.update(ann, created.id, updateRequest({}))
      yield* service.update(
        ann,
        created.id,
        updateRequest({ port: 6543, password: "n3w-pa55" }, {
          include_db_session_metadata: true
        })
      )
      const entries = (yield* auditEntries(org.id)).filter((e) => e.action === "connector.update")
      expect(entries.map((e) => e.details)).toEqual([
        { changed: ["postgres.port", "postgres.password", "include_db_session_metadata"] }
      ])
      expect(JSON.stringify(entries)).not.toContain("n3w-pa55")
    })))

  it.effect("the type cannot change (InvalidRequest); a viewer is PermissionDenied; hidden or foreign is NotFound", () =>
    run(Effect.gen(function*() {
      const { ann, ben, benMember, bob, org } = yield* setup
      const other = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(
        ann,
        postgresRequest("W", {
          is_public: false,
          grants: [{ member_id: benMember.id, access_type: "viewer" }]
        })
      )
      const retyped = Schema.decodeUnknownSync(Connector.UpdateConnectorRequest)(demoRequest())
      expect((yield* Effect.flip(service.update(ann, created.id, retyped)))._tag).toBe("InvalidRequest")
      expect(yield* Effect.flip(service.update(ben, created.id, updateRequest({})))).toMatchObject({
        _tag: "PermissionDenied",
        message: "permission denied: editor access required"
      })
      // Bob cannot see it at all: not found, even though he also lacks connector:write.
      expect((yield* Effect.flip(service.update(bob, created.id, updateRequest({}))))._tag).toBe("NotFound")
      expect((yield* Effect.flip(service.update(other.admin, created.id, updateRequest({}))))._tag).toBe("NotFound")
      const stored = Option.getOrThrow(yield* (yield* ConnectorRepo.ConnectorRepo).get(org.id, created.id))
      expect(stored.config.name).toBe("W")
    })))

  it.effect("an editor without connector:write is PermissionDenied", () =>
    run(Effect.gen(function*() {
      const { ann, bob, bobMember } = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(
        ann,
        postgresRequest("W", { is_public: false, grants: [{ member_id: bobMember.id, access_type: "editor" }] })
      )
      expect(yield* Effect.flip(service.update(bob, created.id, updateRequest({})))).toMatchObject({
        _tag: "PermissionDenied",
        message: "permission denied: connector:write required"
      })
    })))
})

describe("Connectors.delete", () => {
  it.effect("the owner deletes ({id, success}) and the deletion is audited", () =>
    run(Effect.gen(function*() {
      const { ann, org } = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(ann, postgresRequest())
      expect(yield* service.delete(ann, created.id)).toEqual({ id: created.id, success: true })
      expect((yield* Effect.flip(service.getAccess(ann, created.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(service.delete(ann, created.id)))._tag).toBe("NotFound")
      expect((yield* auditEntries(org.id)).map((e) => [e.action, e.details])).toContainEqual([
        "connector.delete",
        { name: "Warehouse", connector_type: "POSTGRES" }
      ])
    })))

  it.effect("an editor is PermissionDenied; another organization's caller is NotFound", () =>
    run(Effect.gen(function*() {
      const { ann, ben, benMember, org } = yield* setup
      const other = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(
        ann,
        postgresRequest("W", { is_public: false, grants: [{ member_id: benMember.id, access_type: "editor" }] })
      )
      expect(yield* Effect.flip(service.delete(ben, created.id))).toMatchObject({
        _tag: "PermissionDenied",
        message: "permission denied: owner access required"
      })
      expect((yield* Effect.flip(service.delete(other.admin, created.id)))._tag).toBe("NotFound")
      expect(Option.isSome(yield* (yield* ConnectorRepo.ConnectorRepo).get(org.id, created.id))).toBe(true)
    })))
})

describe("Connectors access", () => {
  it.effect("getAccess: owners and editors read it; a viewer is PermissionDenied; invisible is NotFound", () =>
    run(Effect.gen(function*() {
      const { admin, ann, annMember, ben, benMember } = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(
        admin,
        postgresRequest("W", { is_public: false, grants: [{ member_id: annMember.id, access_type: "editor" }] })
      )
      expect((yield* service.getAccess(ann, created.id)).grants.length).toBe(2)
      expect((yield* Effect.flip(service.getAccess(ben, created.id)))._tag).toBe("NotFound")
      yield* service.putAccess(admin, created.id, {
        is_public: false,
        grants: [{ member_id: benMember.id, access_type: "viewer" }]
      })
      expect((yield* Effect.flip(service.getAccess(ben, created.id)))._tag).toBe("PermissionDenied")
    })))

  it.effect("putAccess replaces the access atomically, keeps the caller's owner grant and audits the result", () =>
    run(Effect.gen(function*() {
      const { ann, annMember, bob, bobMember, org, readers } = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(ann, postgresRequest())
      const replaced = yield* service.putAccess(ann, created.id, {
        is_public: true,
        grants: [
          { member_id: bobMember.id, access_type: "viewer" },
          { role_id: readers.id, access_type: "editor" }
        ]
      })
      const expected = {
        is_public: true,
        grants: [
          { member_id: annMember.id, access_type: "owner", granted_by: annMember.id },
          { member_id: bobMember.id, access_type: "viewer", granted_by: annMember.id },
          { role_id: readers.id, access_type: "editor", granted_by: annMember.id }
        ]
      }
      expect(encodeAccess(replaced)).toEqual(expected)
      expect(encodeAccess(yield* service.getAccess(ann, created.id))).toEqual(expected)
      expect((yield* service.list(bob)).map((c) => c.id)).toEqual([created.id])
      const entry = (yield* auditEntries(org.id)).find((e) => e.action === "connector.access_update")
      expect(entry?.details).toEqual({
        is_public: true,
        grants: [
          { member_id: annMember.id, access_type: "owner" },
          { member_id: bobMember.id, access_type: "viewer" },
          { role_id: readers.id, access_type: "editor" }
        ]
      })
    })))

  it.effect("putAccess: an editor is PermissionDenied, invisible is NotFound, an unknown grantee InvalidRequest", () =>
    run(Effect.gen(function*() {
      const { ann, ben, benMember, bob } = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(
        ann,
        postgresRequest("W", { is_public: false, grants: [{ member_id: benMember.id, access_type: "editor" }] })
      )
      const open = { is_public: true, grants: [] }
      expect((yield* Effect.flip(service.putAccess(ben, created.id, open)))._tag).toBe("PermissionDenied")
      expect((yield* Effect.flip(service.putAccess(bob, created.id, open)))._tag).toBe("NotFound")
      const unknown = {
        is_public: false,
        grants: [{ member_id: MemberId.make(Fixtures.uuid()), access_type: "viewer" as const }]
      }
      expect((yield* Effect.flip(service.putAccess(ann, created.id, unknown)))._tag).toBe("InvalidRequest")
      expect((yield* service.getAccess(ann, created.id)).is_public).toBe(false)
    })))

  it.effect("another owner can remove the creator, who then loses access", () =>
    run(Effect.gen(function*() {
      const { ann, annMember, ben, benMember } = yield* setup
      const service = yield* Connectors.Connectors
      const created = yield* service.create(
        ann,
        postgresRequest("W", { is_public: false, grants: [{ member_id: benMember.id, access_type: "owner" }] })
      )
      const replaced = yield* service.putAccess(ben, created.id, { is_public: false, grants: [] })
      expect(encodeAccess(replaced).grants).toEqual([
        { member_id: benMember.id, access_type: "owner", granted_by: annMember.id }
      ])
      expect((yield* Effect.flip(service.getAccess(ann, created.id)))._tag).toBe("NotFound")
      expect(yield* service.list(ann)).toEqual([])
    })))
})

describe("Connectors.resolveForUse", () => {
  it.effect("returns the stored configurations, passwords included, in the order asked and once each", () =>
    run(Effect.gen(function*() {
      const { admin, ann, bob } = yield* setup
      const service = yield* Connectors.Connectors
      const first = yield* service.create(ann, postgresRequest("First", { is_public: true, grants: [] }))
      const second = yield* service.create(admin, demoRequest("Second"))
      yield* service.putAccess(admin, second.id, { is_public: true, grants: [] })
      const resolved = yield* service.resolveForUse(bob, [second.id, first.id, second.id])
      expect(resolved.map((r) => r.id)).toEqual([second.id, first.id])
      const pg = resolved[1]!.config
      expect(pg.connector_type === "POSTGRES" && Redacted.value(pg.postgres.password)).toBe(PASSWORD)
      expect(yield* service.resolveForUse(bob, [])).toEqual([])
    })))

  it.effect("any connector the caller cannot use is NotFound; without connector:read PermissionDenied", () =>
    run(Effect.gen(function*() {
      const { admin, ann, bob, org } = yield* setup
      const other = yield* setup
      const service = yield* Connectors.Connectors
      const open = yield* service.create(ann, postgresRequest("Open", { is_public: true, grants: [] }))
      const closed = yield* service.create(admin, postgresRequest("Closed"))
      const foreign = yield* service.create(other.admin, postgresRequest("Foreign", { is_public: true, grants: [] }))
      expect(yield* Effect.flip(service.resolveForUse(bob, [open.id, closed.id]))).toMatchObject({
        _tag: "NotFound",
        message: "Resource not found"
      })
      expect((yield* Effect.flip(service.resolveForUse(bob, [foreign.id])))._tag).toBe("NotFound")
      const nobody = principalOf(yield* Fixtures.member(org.id), [])
      expect((yield* Effect.flip(service.resolveForUse(nobody, [open.id])))._tag).toBe("PermissionDenied")
    })))
})

describe("Connectors.createFromFiles", () => {
  const upload = (fileName: string, sizeBytes = 40) => ({ path: `/tmp/${fileName}`, fileName, sizeBytes })

  it.effect("makes a FILES connector of the uploads, a table each; JSON cannot make one", () =>
    run(Effect.gen(function*() {
      const { ann, bob, org } = yield* setup
      const connectors = yield* Connectors.Connectors
      const made = yield* connectors.createFromFiles(ann, { uploads: [upload("sales.csv"), upload("stores.csv")] })
      expect(made).toMatchObject({ name: "sales.csv, stores.csv", type: "FILES" })
      const stored = Option.getOrThrow(yield* (yield* ConnectorRepo.ConnectorRepo).get(org.id, made.id))
      expect(stored.config.connector_type === "FILES" && stored.config.files.tables.map((t) => t.table)).toEqual([
        "sales",
        "stores"
      ])
      // A PATCH renames it and keeps its files whatever it sends.
      const renamed = yield* connectors.update(ann, made.id, {
        config: { connector_type: "FILES", name: "Sales", files: { tables: [], storage_prefix: "x/", size_bytes: 0 } }
      })
      expect(renamed.name).toBe("Sales")
      const after = Option.getOrThrow(yield* (yield* ConnectorRepo.ConnectorRepo).get(org.id, made.id))
      expect(after.config).toEqual({ ...stored.config, name: "Sales" })

      const json = yield* Effect.flip(connectors.create(ann, {
        config: { connector_type: "FILES", name: "x", files: { tables: [], storage_prefix: "x/", size_bytes: 0 } }
      }))
      expect(json.message).toMatch(/multipart/)
      expect((yield* Effect.flip(connectors.createFromFiles(bob, { uploads: [upload("a.csv")] })))._tag).toBe(
        "PermissionDenied"
      )

      // Deleting it forgets its database.
      yield* connectors.delete(ann, made.id)
      expect(yield* (yield* ConnectorFiles.MemoryConnectorFiles).removed).toEqual(["memory/1/"])
    })))

  it.effect("refuses a file past its size, an organization past its quota, and a file that does not load", () =>
    run(Effect.gen(function*() {
      const { ann, org } = yield* setup
      const connectors = yield* Connectors.Connectors
      const big = yield* Effect.flip(connectors.createFromFiles(ann, { uploads: [upload("big.csv", 101)] }))
      expect(big.message).toMatch(/^big\.csv: 101 bytes, past the 100/)
      yield* connectors.createFromFiles(ann, { uploads: [upload("a.csv", 100), upload("b.csv", 100)] })
      const over = yield* Effect.flip(connectors.createFromFiles(ann, { uploads: [upload("c.csv", 60)] }))
      expect(over.message).toMatch(/260 bytes, past its 250/)
      const broken = yield* Effect.flip(connectors.createFromFiles(ann, { uploads: [upload("broken.csv")] }))
      expect(broken).toMatchObject({ _tag: "InvalidRequest", message: "broken.csv: line 2 does not read" })
      expect(yield* Effect.flip(connectors.createFromFiles(ann, { uploads: [] }))).toMatchObject({
        _tag: "InvalidRequest"
      })
      expect((yield* (yield* ConnectorRepo.ConnectorRepo).listWithAccess(org.id)).length).toBe(1)
    })))
})
