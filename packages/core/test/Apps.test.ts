import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as AgentRepo from "../src/AgentRepo.js"
import type * as App from "../src/App.js"
import * as AppRepo from "../src/AppRepo.js"
import * as Apps from "../src/Apps.js"
import * as AuditLogRepo from "../src/AuditLogRepo.js"
import * as Auditor from "../src/Auditor.js"
import * as Auth from "../src/Auth.js"
import * as Connector from "../src/Connector.js"
import * as ConnectorFiles from "../src/ConnectorFiles.js"
import * as ConnectorRepo from "../src/ConnectorRepo.js"
import * as Connectors from "../src/Connectors.js"
import * as ConnectorTester from "../src/ConnectorTester.js"
import * as IdGenerator from "../src/IdGenerator.js"
import { AppId, ChatId, type ConnectorId, RoleId } from "../src/Ids.js"
import type { Member } from "../src/Member.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import * as PlaybookRepo from "../src/PlaybookRepo.js"
import * as Policy from "../src/Policy.js"
import * as Role from "../src/Role.js"
import * as RoleRepo from "../src/RoleRepo.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Transaction from "../src/Transaction.js"

// The memory ports these services need, built directly (testing/Memory.ts pulls in modules others
// are still writing).
const repositories = Layer.mergeAll(
  OrganizationRepo.layerMemory,
  MemberRepo.layerMemory,
  RoleRepo.layerMemory,
  AuditLogRepo.layerMemory,
  ConnectorRepo.layerMemory,
  AppRepo.layerMemory,
  AgentRepo.layerMemory,
  PlaybookRepo.layerMemory
).pipe(Layer.provideMerge(Layer.merge(Transaction.layerMemory, IdGenerator.layerTest)))

const TestLayer = Apps.layer.pipe(
  Layer.provideMerge(Connectors.layer),
  Layer.provideMerge(Auditor.layer),
  Layer.provideMerge(Layer.mergeAll(repositories, ConnectorTester.layerMemory, ConnectorFiles.layerMemory()))
)

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) =>
  Effect.provide(effect, TestLayer)

// A session by default, as `Auth` builds principals.
const principalOf = (member: Member, roles: ReadonlyArray<Role.RoleRecord>, auth = Policy.Session()) =>
  Auth.principalOf(member, roles, auth)

const demo = (name: string, access?: Connector.SetConnectorAccess): Connector.CreateConnectorRequest => ({
  config: Schema.decodeUnknownSync(Connector.ConnectorConfig)({ connector_type: "DEMO", name, demo: {} }),
  ...(access === undefined ? {} : { access })
})

// An organization with an admin, two members (`member` system role: chat:read/write,
// connector:read), a reader (chat:read only), a public connector and one only Ann may use.
const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const now = yield* DateTime.now
  const system = Role.systemRoles({
    organizationId: org.id,
    adminId: RoleId.make(Fixtures.uuid()),
    memberId: RoleId.make(Fixtures.uuid()),
    now
  })
  const readerRole = Role.make({
    id: RoleId.make(Fixtures.uuid()),
    organizationId: org.id,
    request: { name: "Readers", permissions: ["chat:read", "connector:read"] },
    now
  })
  const roles = yield* RoleRepo.RoleRepo
  for (const role of [system.admin, system.member, readerRole]) yield* Effect.orDie(roles.create(role))
  const annMember = yield* Fixtures.member(org.id)
  const admin = principalOf(yield* Fixtures.member(org.id), [system.admin])
  const ann = principalOf(annMember, [system.member])
  const bob = principalOf(yield* Fixtures.member(org.id), [system.member])
  const reader = principalOf(yield* Fixtures.member(org.id), [readerRole])
  const connectors = yield* Connectors.Connectors
  const shared = yield* connectors.create(admin, demo("Shared", { is_public: true, grants: [] }))
  const annOnly = yield* connectors.create(
    admin,
    demo("Ann only", { is_public: false, grants: [{ member_id: annMember.id, access_type: "viewer" }] })
  )
  return { org, admin, ann, annMember, bob, reader, readerRole, shared: shared.id, annOnly: annOnly.id }
})

const request = (
  dataSources: ReadonlyArray<ConnectorId>,
  extra: Partial<App.CreateRequest> = {}
): App.CreateRequest => ({
  name: "Revenue board",
  code: "print('hi')",
  dataSources,
  ...extra
})

describe("Apps.create", () => {
  it.effect("creates the caller's app with defaults, served camelCase", () =>
    run(Effect.gen(function*() {
      const { ann, shared } = yield* setup
      const apps = yield* Apps.Apps
      const chatId = ChatId.make(Fixtures.uuid())
      const created = yield* apps.create(ann, request([shared, shared], { chatId, files: { "main.py": "x = 1" } }))
      expect(created).toEqual({
        id: expect.any(String),
        name: "Revenue board",
        description: "",
        code: "print('hi')",
        files: { "main.py": "x = 1" },
        dataSources: [shared],
        chatId,
        createdAt: expect.anything(),
        updatedAt: expect.anything()
      })
      const minimal = yield* apps.create(ann, { name: "Bare", code: "" })
      expect(minimal).toMatchObject({ description: "", files: {}, dataSources: [] })
      expect("chatId" in minimal).toBe(false)
    })))

  it.effect("every data source must be a connector the caller may use (InvalidRequest); needs chat:write", () =>
    run(Effect.gen(function*() {
      const { annOnly, bob, org, reader, shared } = yield* setup
      const other = yield* setup
      const apps = yield* Apps.Apps
      for (const id of [annOnly, other.shared]) {
        expect(yield* Effect.flip(apps.create(bob, request([shared, id])))).toMatchObject({
          _tag: "InvalidRequest",
          message: `dataSources: connector ${id} not found or not accessible`
        })
      }
      expect(yield* Effect.flip(apps.create(reader, request([shared])))).toMatchObject({
        _tag: "PermissionDenied",
        message: "permission denied: chat:write required"
      })
      expect(yield* (yield* AppRepo.AppRepo).list(org.id)).toEqual([])
    })))
})

describe("Apps.get (GetApp)", () => {
  it.effect("answers {app, hasWritePermission}: true for the owner and an admin, false for anyone else", () =>
    run(Effect.gen(function*() {
      const { admin, ann, annMember, bob, reader, readerRole, shared } = yield* setup
      const apps = yield* Apps.Apps
      const created = yield* apps.create(ann, request([shared]))
      const owned = yield* apps.get(ann, { appId: created.id })
      expect(owned).toEqual({ app: created, hasWritePermission: true })
      expect((yield* apps.get(admin, { appId: created.id })).hasWritePermission).toBe(true)
      expect((yield* apps.get(bob, { appId: created.id })).hasWritePermission).toBe(false)
      // The owner, once left with only chat:read (say, through a narrow key), may read but not change it.
      const narrowed = principalOf(annMember, [readerRole])
      expect((yield* apps.get(narrowed, { appId: created.id })).hasWritePermission).toBe(false)
      expect((yield* apps.get(reader, { appId: created.id })).hasWritePermission).toBe(false)
    })))

  it.effect("another organization's app, a missing one, or one over a connector the caller cannot reach is NotFound", () =>
    run(Effect.gen(function*() {
      const { ann, annOnly, bob, shared } = yield* setup
      const other = yield* setup
      const apps = yield* Apps.Apps
      const open = yield* apps.create(ann, request([shared]))
      const hidden = yield* apps.create(ann, request([annOnly]))
      for (
        const [principal, appId] of [[other.admin, open.id], [bob, hidden.id], [
          ann,
          AppId.make(Fixtures.uuid())
        ]] as const
      ) {
        expect(yield* Effect.flip(apps.get(principal, { appId }))).toMatchObject({
          _tag: "NotFound",
          message: "Resource not found"
        })
      }
    })))

  it.effect("a visible app without chat:read is PermissionDenied", () =>
    run(Effect.gen(function*() {
      const { ann, org, shared } = yield* setup
      const apps = yield* Apps.Apps
      const created = yield* apps.create(ann, request([shared]))
      const nobody = principalOf(yield* Fixtures.member(org.id), [])
      expect((yield* Effect.flip(apps.get(nobody, { appId: created.id })))._tag).toBe("PermissionDenied")
      expect((yield* Effect.flip(apps.list(nobody)))._tag).toBe("PermissionDenied")
    })))
})

describe("Apps.list", () => {
  it.effect("lists the apps the caller can see, newest first", () =>
    run(Effect.gen(function*() {
      const { ann, annOnly, bob, shared } = yield* setup
      const other = yield* setup
      const apps = yield* Apps.Apps
      yield* apps.create(ann, request([shared], { name: "First" }))
      yield* apps.create(ann, request([annOnly], { name: "Ann's" }))
      yield* apps.create(bob, request([], { name: "Third" }))
      yield* apps.create(other.ann, request([other.shared], { name: "Elsewhere" }))
      expect((yield* apps.list(ann)).apps.map((a) => a.name)).toEqual(["Third", "Ann's", "First"])
      expect((yield* apps.list(bob)).apps.map((a) => a.name)).toEqual(["Third", "First"])
    })))
})

describe("Apps.delete", () => {
  it.effect("the owner or an admin deletes; anyone else is PermissionDenied; hidden or foreign is NotFound", () =>
    run(Effect.gen(function*() {
      const { admin, ann, annOnly, bob, shared } = yield* setup
      const other = yield* setup
      const apps = yield* Apps.Apps
      const mine = yield* apps.create(ann, request([shared]))
      const another = yield* apps.create(ann, request([shared]))
      const hidden = yield* apps.create(ann, request([annOnly]))
      expect(yield* Effect.flip(apps.delete(bob, mine.id))).toMatchObject({
        _tag: "PermissionDenied",
        message: "permission denied: only the app's owner or an admin may change it"
      })
      expect((yield* Effect.flip(apps.delete(bob, hidden.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(apps.delete(other.admin, mine.id)))._tag).toBe("NotFound")
      expect(yield* apps.delete(ann, mine.id)).toEqual({ id: mine.id, success: true })
      expect(yield* apps.delete(admin, another.id)).toEqual({ id: another.id, success: true })
      expect((yield* Effect.flip(apps.get(ann, { appId: mine.id })))._tag).toBe("NotFound")
      expect((yield* Effect.flip(apps.delete(ann, mine.id)))._tag).toBe("NotFound")
      expect((yield* apps.list(ann)).apps.map((a) => a.id)).toEqual([hidden.id])
    })))
})
