import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Agent from "../src/Agent.js"
import * as AgentRepo from "../src/AgentRepo.js"
import * as AgentRun from "../src/AgentRun.js"
import * as Agents from "../src/Agents.js"
import * as AgentTrigger from "../src/AgentTrigger.js"
import * as AuditLogRepo from "../src/AuditLogRepo.js"
import * as Auditor from "../src/Auditor.js"
import * as Auth from "../src/Auth.js"
import * as ChatChannelRepo from "../src/ChatChannelRepo.js"
import * as Connector from "../src/Connector.js"
import * as ConnectorFiles from "../src/ConnectorFiles.js"
import * as ConnectorRepo from "../src/ConnectorRepo.js"
import * as Connectors from "../src/Connectors.js"
import * as ConnectorTester from "../src/ConnectorTester.js"
import * as IdGenerator from "../src/IdGenerator.js"
import {
  AgentId,
  AgentRunId,
  ChatChannelId,
  ConnectorId,
  type OrganizationId,
  RoleId,
  WebhookTriggerId
} from "../src/Ids.js"
import * as JobQueue from "../src/JobQueue.js"
import type { Member } from "../src/Member.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import type * as Permission from "../src/Permission.js"
import * as PlaybookRepo from "../src/PlaybookRepo.js"
import * as Policy from "../src/Policy.js"
import * as Role from "../src/Role.js"
import * as RoleRepo from "../src/RoleRepo.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Transaction from "../src/Transaction.js"

// The memory ports these services need, built directly (testing/Memory.ts pulls in modules others
// are still writing). The queue is a parameter so one test can break it.
const layerWith = (queue: Layer.Layer<JobQueue.JobQueue, never, Transaction.MemoryState | IdGenerator.IdGenerator>) => {
  const repositories = Layer.mergeAll(
    OrganizationRepo.layerMemory,
    MemberRepo.layerMemory,
    RoleRepo.layerMemory,
    AuditLogRepo.layerMemory,
    ConnectorRepo.layerMemory,
    AgentRepo.layerMemory,
    PlaybookRepo.layerMemory,
    ChatChannelRepo.layerMemory,
    queue
  ).pipe(Layer.provideMerge(Layer.merge(Transaction.layerMemory, IdGenerator.layerTest)))
  return Agents.layer.pipe(
    Layer.provideMerge(Connectors.layer),
    Layer.provideMerge(Auditor.layer),
    Layer.provideMerge(Layer.mergeAll(repositories, ConnectorTester.layerMemory, ConnectorFiles.layerMemory()))
  )
}

const TestLayer = layerWith(JobQueue.layerMemory)

type Services = Layer.Layer.Success<typeof TestLayer>

const run = <A, E>(effect: Effect.Effect<A, E, Services>) => Effect.provide(effect, TestLayer)

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

const demo = (name: string, access?: Connector.SetConnectorAccess): Connector.CreateConnectorRequest => ({
  config: Schema.decodeUnknownSync(Connector.ConnectorConfig)({ connector_type: "DEMO", name, demo: {} }),
  ...(access === undefined ? {} : { access })
})

// An organization with an admin, two members (`member` system role: agent:read/write,
// connector:read), a reader (agent:read and connector:read only), a shared public connector and a
// connector only Ann may use.
const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const system = Role.systemRoles({
    organizationId: org.id,
    adminId: RoleId.make(Fixtures.uuid()),
    memberId: RoleId.make(Fixtures.uuid()),
    now: yield* DateTime.now
  })
  yield* Effect.orDie((yield* RoleRepo.RoleRepo).create(system.admin))
  yield* Effect.orDie((yield* RoleRepo.RoleRepo).create(system.member))
  const readerRole = yield* customRole(org.id, "Readers", ["agent:read", "connector:read"])
  const adminMember = yield* Fixtures.member(org.id)
  const annMember = yield* Fixtures.member(org.id)
  const bobMember = yield* Fixtures.member(org.id)
  const readerMember = yield* Fixtures.member(org.id)
  const admin = principalOf(adminMember, [system.admin])
  const ann = principalOf(annMember, [system.member])
  const bob = principalOf(bobMember, [system.member])
  const reader = principalOf(readerMember, [readerRole])
  const connectors = yield* Connectors.Connectors
  const shared = yield* connectors.create(admin, demo("Shared", { is_public: true, grants: [] }))
  const annOnly = yield* connectors.create(
    admin,
    demo("Ann only", { is_public: false, grants: [{ member_id: annMember.id, access_type: "viewer" }] })
  )
  return { org, system, admin, ann, annMember, bob, bobMember, reader, shared: shared.id, annOnly: annOnly.id }
})

const createRequest = (
  connectorIds: ReadonlyArray<ConnectorId>,
  extra: Partial<Agent.CreateRequest> = {}
): Agent.CreateRequest => ({
  name: "Weekly revenue",
  prompt: "Summarize last week's revenue",
  connector_ids: connectorIds,
  ...extra
})

const claimAll = Effect.gen(function*() {
  const queue = yield* JobQueue.JobQueue
  const claimed: Array<JobQueue.Job> = []
  while (true) {
    const job = yield* queue.claim({ workerId: "test", kinds: [AgentRun.jobKind], leaseMillis: 60_000 })
    if (Option.isNone(job)) return claimed
    claimed.push(job.value)
  }
})

const runsOf = (principal: Policy.Principal, agentId: AgentId) =>
  Effect.map(
    Effect.flatMap(Agents.Agents, (agents) => agents.listRuns(principal, agentId, { limit: 200 })),
    (page) => page.runs
  )

const auditActions = (organizationId: OrganizationId) =>
  Effect.map(
    Effect.flatMap(AuditLogRepo.AuditLogRepo, (repo) => repo.list(organizationId, { limit: 100 })),
    (page) => page.items.map((entry) => [entry.action, entry.resource_id, entry.details] as const)
  )

describe("Agents.create", () => {
  it.effect("creates the caller's agent with a fresh webhook trigger id; served without the organization", () =>
    run(Effect.gen(function*() {
      const { ann, annMember, annOnly, org, shared } = yield* setup
      const agents = yield* Agents.Agents
      const created = yield* agents.create(
        ann,
        createRequest([shared, annOnly, shared], { cron_strings: ["0 9 * * 1-5"], email_addresses: ["a@x.example"] })
      )
      expect(created).toEqual({
        id: expect.any(String),
        owner_id: annMember.id,
        name: "Weekly revenue",
        prompt: "Summarize last week's revenue",
        connector_ids: [shared, annOnly],
        cron_strings: ["0 9 * * 1-5"],
        email_addresses: ["a@x.example"],
        webhook_trigger_id: expect.any(String),
        created_at: expect.anything(),
        updated_at: expect.anything()
      })
      expect(Schema.is(WebhookTriggerId)(created.webhook_trigger_id)).toBe(true)
      expect(created.webhook_trigger_id).not.toBe(created.id)
      expect("organization_id" in created).toBe(false)
      expect(yield* agents.get(ann, created.id)).toEqual(created)
      expect(yield* auditActions(org.id)).toContainEqual([
        "agent.create",
        created.id,
        { name: "Weekly revenue", connector_ids: [shared, annOnly] }
      ])
    })))

  it.effect("every connector must exist and be usable by the caller (InvalidRequest, the same message either way)", () =>
    run(Effect.gen(function*() {
      const { annOnly, bob, org, shared } = yield* setup
      const other = yield* setup
      const agents = yield* Agents.Agents
      for (const id of [annOnly, other.shared, ConnectorId.make(999_999)]) {
        const error = yield* Effect.flip(agents.create(bob, createRequest([shared, id])))
        expect(error).toMatchObject({
          _tag: "InvalidRequest",
          message: `connector_ids: connector ${id} not found or not accessible`
        })
      }
      const missing = ConnectorId.make(999_999)
      expect(yield* Effect.flip(agents.create(bob, createRequest([annOnly, shared, missing, annOnly])))).toMatchObject({
        _tag: "InvalidRequest",
        message: `connector_ids: connector ${annOnly}, ${missing} not found or not accessible`
      })
      // Without connector:read the caller cannot use any connector: that is a missing permission.
      const nobody = principalOf(yield* Fixtures.member(org.id), [
        yield* customRole(org.id, "Agent writers", ["agent:read", "agent:write"])
      ])
      expect(yield* Effect.flip(agents.create(nobody, createRequest([shared])))).toMatchObject({
        _tag: "PermissionDenied",
        message: "permission denied: connector:read required"
      })
      expect(yield* (yield* AgentRepo.AgentRepo).list(org.id)).toEqual([])
    })))

  it.effect("needs agent:write", () =>
    run(Effect.gen(function*() {
      const { reader, shared } = yield* setup
      const error = yield* Effect.flip((yield* Agents.Agents).create(reader, createRequest([shared])))
      expect(error).toMatchObject({ _tag: "PermissionDenied", message: "permission denied: agent:write required" })
    })))
})

describe("Agents visibility: get and list", () => {
  it.effect("an agent is hidden (NotFound) from callers lacking access to any connector it uses", () =>
    run(Effect.gen(function*() {
      const { ann, annOnly, bob, org, shared, system } = yield* setup
      const other = yield* setup
      const agents = yield* Agents.Agents
      const secondAdmin = principalOf(yield* Fixtures.member(org.id), [system.admin])
      const open = yield* agents.create(ann, createRequest([shared], { name: "Open" }))
      const private_ = yield* agents.create(ann, createRequest([shared, annOnly], { name: "Private" }))
      yield* agents.create(ann, createRequest([], { name: "No connectors" }))
      expect((yield* agents.get(bob, open.id)).name).toBe("Open")
      expect(yield* Effect.flip(agents.get(bob, private_.id))).toMatchObject({
        _tag: "NotFound",
        message: "Resource not found"
      })
      // Roles never replace connector access: an admin who was not granted Ann's connector is refused too.
      expect((yield* Effect.flip(agents.get(secondAdmin, private_.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(agents.get(other.admin, open.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(agents.get(ann, AgentId.make(Fixtures.uuid()))))._tag).toBe("NotFound")
      expect((yield* agents.list(bob)).agents.map((a) => a.name)).toEqual(["No connectors", "Open"])
      expect((yield* agents.list(ann)).agents.map((a) => a.name)).toEqual(["No connectors", "Private", "Open"])
      expect((yield* agents.list(other.admin)).agents).toEqual([])
    })))

  it.effect("a deleted connector is removed from the agents that use it, which stay reachable by their owner", () =>
    run(Effect.gen(function*() {
      const { admin, ann, annOnly, bob, shared } = yield* setup
      const agents = yield* Agents.Agents
      const created = yield* agents.create(ann, createRequest([shared, annOnly]))
      yield* (yield* Connectors.Connectors).delete(admin, shared)
      // Not stranded: its owner still reads, fixes and deletes it.
      const after = yield* agents.get(ann, created.id)
      expect(after.connector_ids).toEqual([annOnly])
      // Still hidden from whoever cannot reach the connectors it keeps.
      expect((yield* Effect.flip(agents.get(bob, created.id)))._tag).toBe("NotFound")
      yield* (yield* Connectors.Connectors).delete(admin, annOnly)
      expect((yield* agents.get(bob, created.id)).connector_ids).toEqual([])
      expect((yield* agents.delete(ann, created.id)).success).toBe(true)
    })))

  it.effect("visible without agent:read is PermissionDenied; invisible is NotFound even then", () =>
    run(Effect.gen(function*() {
      const { ann, annOnly, org, shared } = yield* setup
      const agents = yield* Agents.Agents
      const open = yield* agents.create(ann, createRequest([shared]))
      const hidden = yield* agents.create(ann, createRequest([annOnly]))
      const nobody = principalOf(yield* Fixtures.member(org.id), [])
      expect(yield* Effect.flip(agents.get(nobody, open.id))).toMatchObject({
        _tag: "PermissionDenied",
        message: "permission denied: agent:read required"
      })
      expect((yield* Effect.flip(agents.get(nobody, hidden.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(agents.list(nobody)))._tag).toBe("PermissionDenied")
    })))
})

describe("Agents.update and delete", () => {
  it.effect("a patch changes the fields it names, re-checks new connectors and audits what changed", () =>
    run(Effect.gen(function*() {
      const { ann, annOnly, bob, org, shared } = yield* setup
      const agents = yield* Agents.Agents
      const channel = yield* Fixtures.chatChannel(org.id, ann.memberId)
      const created = yield* agents.create(ann, createRequest([shared], { tools: ["sql"], chat_channel_id: channel }))
      // A channel of no channel of the organization is refused when it is set.
      const made = ChatChannelId.make(Fixtures.uuid())
      expect(yield* Effect.flip(agents.create(ann, createRequest([shared], { chat_channel_id: made })))).toMatchObject({
        _tag: "InvalidRequest",
        message: `chat_channel_id: no chat channel "${made}" in this organization`
      })
      expect(yield* Effect.flip(agents.update(bob, created.id, { chat_channel_id: made }))).toMatchObject({
        _tag: "InvalidRequest"
      })
      const updated = yield* agents.update(bob, created.id, { name: "Renamed", tools: null, chat_channel_id: null })
      expect(updated).toMatchObject({ id: created.id, name: "Renamed", connector_ids: [shared] })
      expect("tools" in updated || "chat_channel_id" in updated).toBe(false)
      expect(
        yield* Effect.flip(agents.update(bob, created.id, { connector_ids: [shared, annOnly] }))
      ).toMatchObject({ _tag: "InvalidRequest" })
      yield* agents.update(bob, created.id, { name: "Renamed" })
      expect((yield* auditActions(org.id)).filter(([action]) => action === "agent.update")).toEqual([
        ["agent.update", created.id, { fields: ["name", "tools", "chat_channel_id"] }]
      ])
      expect((yield* agents.get(ann, created.id)).name).toBe("Renamed")
    })))

  it.effect("update: hidden or foreign is NotFound; visible without agent:write is PermissionDenied", () =>
    run(Effect.gen(function*() {
      const { ann, annOnly, bob, reader, shared } = yield* setup
      const other = yield* setup
      const agents = yield* Agents.Agents
      const open = yield* agents.create(ann, createRequest([shared]))
      const hidden = yield* agents.create(ann, createRequest([annOnly]))
      expect((yield* Effect.flip(agents.update(bob, hidden.id, { name: "x" })))._tag).toBe("NotFound")
      expect((yield* Effect.flip(agents.update(other.admin, open.id, { name: "x" })))._tag).toBe("NotFound")
      expect((yield* Effect.flip(agents.update(reader, open.id, { name: "x" })))._tag).toBe("PermissionDenied")
      expect((yield* agents.get(ann, open.id)).name).toBe("Weekly revenue")
    })))

  it.effect("delete removes the agent and its runs, audited; hidden is NotFound; without agent:write 403", () =>
    run(Effect.gen(function*() {
      const { ann, annOnly, bob, org, reader, shared } = yield* setup
      const agents = yield* Agents.Agents
      const open = yield* agents.create(ann, createRequest([shared]))
      const hidden = yield* agents.create(ann, createRequest([annOnly]))
      const queued = yield* agents.runNow(ann, open.id)
      expect((yield* Effect.flip(agents.delete(bob, hidden.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(agents.delete(reader, open.id)))._tag).toBe("PermissionDenied")
      expect(yield* agents.delete(bob, open.id)).toEqual({ id: open.id, success: true })
      expect((yield* Effect.flip(agents.get(ann, open.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(agents.getRun(ann, queued.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(agents.delete(ann, open.id)))._tag).toBe("NotFound")
      expect(yield* auditActions(org.id)).toContainEqual(["agent.delete", open.id, { name: "Weekly revenue" }])
    })))
})

describe("Agents.trigger", () => {
  it.effect("queues a webhook run with its payload and an agent.run job, answering {status: queued}", () =>
    run(Effect.gen(function*() {
      const { ann, bob, org, shared } = yield* setup
      const agents = yield* Agents.Agents
      const created = yield* agents.create(ann, createRequest([shared]))
      const payload = { order: { id: 42, items: ["a", "b"] }, note: null }
      expect(yield* agents.trigger(bob, { triggerId: created.webhook_trigger_id, payload })).toEqual({
        status: "queued"
      })
      const [queued] = yield* runsOf(bob, created.id)
      expect(queued).toEqual({
        id: expect.any(String),
        agent_id: created.id,
        trigger_source: "webhook",
        status: "queued",
        payload,
        created_at: expect.anything()
      })
      const jobs = yield* claimAll
      expect(jobs.map((job) => [job.kind, job.organization_id, job.payload])).toEqual([
        ["agent.run", org.id, { agentRunId: queued!.id, organizationId: org.id }]
      ])
      expect(Schema.is(AgentRun.JobPayload)(jobs[0]!.payload)).toBe(true)
    })))

  it.effect("without a payload the run has none", () =>
    run(Effect.gen(function*() {
      const { ann, shared } = yield* setup
      const agents = yield* Agents.Agents
      const created = yield* agents.create(ann, createRequest([shared]))
      yield* agents.trigger(ann, { triggerId: created.webhook_trigger_id })
      const [queued] = yield* runsOf(ann, created.id)
      expect(queued !== undefined && "payload" in queued).toBe(false)
    })))

  it.effect("an unknown, foreign or hidden agent's trigger id is NotFound and queues nothing", () =>
    run(Effect.gen(function*() {
      const { ann, annOnly, bob } = yield* setup
      const other = yield* setup
      const agents = yield* Agents.Agents
      const hidden = yield* agents.create(ann, createRequest([annOnly]))
      const foreign = yield* agents.create(other.ann, createRequest([other.shared]))
      for (
        const triggerId of [
          hidden.webhook_trigger_id,
          foreign.webhook_trigger_id,
          WebhookTriggerId.make(Fixtures.uuid())
        ]
      ) {
        expect(yield* Effect.flip(agents.trigger(bob, { triggerId }))).toMatchObject({
          _tag: "NotFound",
          message: "Resource not found"
        })
      }
      expect(yield* runsOf(ann, hidden.id)).toEqual([])
      expect(yield* claimAll).toEqual([])
    })))

  it.effect("needs agent:write on a visible agent", () =>
    run(Effect.gen(function*() {
      const { ann, reader, shared } = yield* setup
      const agents = yield* Agents.Agents
      const created = yield* agents.create(ann, createRequest([shared]))
      expect((yield* Effect.flip(agents.trigger(reader, { triggerId: created.webhook_trigger_id })))._tag).toBe(
        "PermissionDenied"
      )
      expect(yield* claimAll).toEqual([])
    })))

  it.effect("a payload over 16 KB serialized is InvalidRequest before anything is queued, even if the schema was bypassed", () =>
    run(Effect.gen(function*() {
      const { ann, shared } = yield* setup
      const agents = yield* Agents.Agents
      const created = yield* agents.create(ann, createRequest([shared]))
      // `{"d":"…"}` is 8 bytes plus the string: exactly at the limit, then one byte over.
      const atLimit = { d: "x".repeat(AgentTrigger.MAX_PAYLOAD_BYTES - 8) }
      expect(AgentTrigger.serializedSize(atLimit)).toBe(AgentTrigger.MAX_PAYLOAD_BYTES)
      yield* agents.trigger(ann, { triggerId: created.webhook_trigger_id, payload: atLimit })
      const over = { d: "x".repeat(AgentTrigger.MAX_PAYLOAD_BYTES - 7) }
      const error = yield* Effect.flip(agents.trigger(ann, { triggerId: created.webhook_trigger_id, payload: over }))
      expect(error).toMatchObject({
        _tag: "InvalidRequest",
        message: "payload is 16385 bytes after JSON serialization; at most 16384 are accepted"
      })
      expect((yield* runsOf(ann, created.id)).length).toBe(1)
      expect((yield* claimAll).length).toBe(1)
    })))

  it.effect("the run and its job commit together: a failing queue leaves no run behind", () =>
    Effect.gen(function*() {
      const { ann, shared } = yield* setup
      const agents = yield* Agents.Agents
      const created = yield* agents.create(ann, createRequest([shared]))
      const exit = yield* Effect.exit(agents.trigger(ann, { triggerId: created.webhook_trigger_id }))
      expect(exit._tag).toBe("Failure")
      expect(yield* runsOf(ann, created.id)).toEqual([])
    }).pipe(Effect.provide(layerWith(
      Layer.effect(
        JobQueue.JobQueue,
        Effect.map(JobQueue.JobQueue, (queue) => ({ ...queue, enqueue: () => Effect.die("queue unavailable") }))
      ).pipe(Layer.provide(JobQueue.layerMemory))
    ))))
})

describe("Agents runs", () => {
  it.effect("runNow queues a manual run and returns it; getRun reads it back", () =>
    run(Effect.gen(function*() {
      const { ann, bob, org, shared } = yield* setup
      const agents = yield* Agents.Agents
      const created = yield* agents.create(ann, createRequest([shared]))
      const queued = yield* agents.runNow(bob, created.id)
      expect(queued).toMatchObject({ agent_id: created.id, trigger_source: "manual", status: "queued" })
      expect("organization_id" in queued).toBe(false)
      expect(yield* agents.getRun(ann, queued.id)).toEqual(queued)
      expect((yield* claimAll).map((job) => job.payload)).toEqual([{ agentRunId: queued.id, organizationId: org.id }])
    })))

  it.effect("runNow and getRun: a hidden agent or another organization's run is NotFound", () =>
    run(Effect.gen(function*() {
      const { ann, annOnly, bob, reader, shared } = yield* setup
      const other = yield* setup
      const agents = yield* Agents.Agents
      const hidden = yield* agents.create(ann, createRequest([annOnly]))
      const open = yield* agents.create(ann, createRequest([shared]))
      const hiddenRun = yield* agents.runNow(ann, hidden.id)
      expect((yield* Effect.flip(agents.runNow(bob, hidden.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(agents.runNow(reader, open.id)))._tag).toBe("PermissionDenied")
      expect((yield* Effect.flip(agents.getRun(bob, hiddenRun.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(agents.getRun(other.admin, hiddenRun.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(agents.getRun(ann, AgentRunId.make(Fixtures.uuid()))))._tag).toBe("NotFound")
    })))

  it.effect("listRuns pages newest first by cursor; a bad cursor is InvalidRequest; hidden is NotFound", () =>
    run(Effect.gen(function*() {
      const { ann, annOnly, bob, shared } = yield* setup
      const agents = yield* Agents.Agents
      const created = yield* agents.create(ann, createRequest([shared]))
      const hidden = yield* agents.create(ann, createRequest([annOnly]))
      const runs: Array<AgentRun.View> = []
      for (let i = 0; i < 3; i++) runs.push(yield* agents.runNow(ann, created.id))
      const first = yield* agents.listRuns(bob, created.id, { limit: 2 })
      expect(first.runs.map((r) => r.id)).toEqual([runs[2]!.id, runs[1]!.id])
      expect(first.next_cursor).toEqual(expect.any(String))
      const second = yield* agents.listRuns(bob, created.id, { limit: 2, cursor: first.next_cursor! })
      expect(second.runs.map((r) => r.id)).toEqual([runs[0]!.id])
      expect("next_cursor" in second).toBe(false)
      expect(yield* Effect.flip(agents.listRuns(bob, created.id, { limit: 2, cursor: "nope" }))).toMatchObject({
        _tag: "InvalidRequest",
        message: "invalid cursor"
      })
      expect((yield* Effect.flip(agents.listRuns(bob, hidden.id, { limit: 2 })))._tag).toBe("NotFound")
    })))

  it.effect("cancelRun cancels a queued or running run; a finished one is a Conflict", () =>
    run(Effect.gen(function*() {
      const { ann, bob, org, reader, shared } = yield* setup
      const agents = yield* Agents.Agents
      const repo = yield* AgentRepo.AgentRepo
      const created = yield* agents.create(ann, createRequest([shared]))
      const queued = yield* agents.runNow(ann, created.id)
      expect((yield* Effect.flip(agents.cancelRun(reader, queued.id)))._tag).toBe("PermissionDenied")
      const cancelled = yield* agents.cancelRun(bob, queued.id)
      expect(cancelled).toMatchObject({ id: queued.id, status: "cancelled", finished_at: expect.anything() })
      expect((yield* agents.getRun(ann, queued.id)).status).toBe("cancelled")
      expect(yield* Effect.flip(agents.cancelRun(bob, queued.id))).toMatchObject({ _tag: "Conflict" })
      // A running run (moved by a worker) can be cancelled too.
      const other = yield* agents.runNow(ann, created.id)
      const stored = Option.getOrThrow(yield* repo.getRun(org.id, other.id))
      yield* repo.updateRun(yield* AgentRun.start(stored, yield* DateTime.now))
      expect((yield* agents.cancelRun(ann, other.id)).status).toBe("cancelled")
    })))

  it.effect("cancelRun: a hidden agent's run or another organization's is NotFound", () =>
    run(Effect.gen(function*() {
      const { ann, annOnly, bob } = yield* setup
      const other = yield* setup
      const agents = yield* Agents.Agents
      const hidden = yield* agents.create(ann, createRequest([annOnly]))
      const queued = yield* agents.runNow(ann, hidden.id)
      expect((yield* Effect.flip(agents.cancelRun(bob, queued.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(agents.cancelRun(other.admin, queued.id)))._tag).toBe("NotFound")
      expect((yield* agents.getRun(ann, queued.id)).status).toBe("queued")
    })))
})
