/**
 * The contract every `AgentRepo` implementation satisfies: agents, and the runs of each agent.
 *
 * Every test creates its own organizations and members, so the suite runs on a shared, non-empty
 * database. Rows are compared through their encoded form, so a timestamp, a JSON payload or an
 * optional field that does not survive storage fails the comparison.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Agent from "../Agent.js"
import { AgentRepo } from "../AgentRepo.js"
import * as AgentRun from "../AgentRun.js"
import {
  AgentId,
  AgentRunId,
  ChatId,
  ConnectorId,
  type MemberId,
  type OrganizationId,
  WebhookTriggerId
} from "../Ids.js"
import * as Json from "../Json.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import * as Pagination from "../Pagination.js"
import { type Transaction, withTransaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const encodeAgentSync = Schema.encodeSync(Agent.Agent)
const encodeAgent = (agent: Agent.Agent) => encodeAgentSync(agent)
const encodeRunSync = Schema.encodeSync(AgentRun.AgentRun)
const encodeRun = (run: AgentRun.AgentRun) => encodeRunSync(run)
const runIds = (page: Pagination.Page<AgentRun.AgentRun>) => page.items.map((r) => r.id)
const at = (iso: string): DateTime.Utc => DateTime.unsafeMake(iso)

const makeAgent = (organizationId: OrganizationId, ownerId: MemberId, createdAt: DateTime.Utc) =>
  Agent.make({
    id: AgentId.make(Fixtures.uuid()),
    organizationId,
    ownerId,
    webhookTriggerId: WebhookTriggerId.make(Fixtures.uuid()),
    request: { name: "Weekly revenue", prompt: "Summarize revenue", connector_ids: [] },
    at: createdAt
  })

const makeRun = (agent: Agent.Agent, createdAt: DateTime.Utc) =>
  AgentRun.make({
    id: AgentRunId.make(Fixtures.uuid()),
    organizationId: agent.organization_id,
    agentId: agent.id,
    triggerSource: "manual",
    at: createdAt
  })

const setup = Effect.gen(function*() {
  const repo = yield* AgentRepo
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  const other = yield* Fixtures.organization()
  const agent = makeAgent(org.id, member.id, at("2026-03-01T09:00:00.000Z"))
  yield* repo.create(agent)
  return { repo, org, member, other, agent }
})

const nextKeyset = (page: Pagination.Page<unknown>) =>
  page.nextCursor === undefined
    ? Effect.dieMessage("expected another page")
    : Effect.orDie(Pagination.decodeCursor(page.nextCursor))

/**
 * Registers the `AgentRepo` contract suite. The layer must also provide `OrganizationRepo` and
 * `MemberRepo` (agents reference their owner) and `Transaction`.
 *
 * @since 0.1.0
 * @category utils
 */
export const agentRepoContract = (
  name: string,
  layer: Layer.Layer<AgentRepo | OrganizationRepo | MemberRepo | Transaction, unknown>
): void => {
  describe(`AgentRepo contract: ${name}`, () => {
    it.effect("round-trips every agent field, found by id and by webhook trigger id", () =>
      Effect.gen(function*() {
        const { agent: minimal, member, org, repo } = yield* setup
        const full = new Agent.Agent({
          id: AgentId.make(Fixtures.uuid()),
          organization_id: org.id,
          owner_id: member.id,
          name: "Churn watch",
          prompt: "Watch churn, report anomalies ✓",
          connector_ids: [ConnectorId.make(3), ConnectorId.make(1)],
          tools: ["sql", "python"],
          cron_strings: ["0 9 * * 1-5", "*/30 * * * *"],
          email_addresses: ["ada@example.com", "grace@example.org"],
          chat_channel_id: "C0123456",
          webhook_trigger_id: WebhookTriggerId.make(Fixtures.uuid()),
          created_at: at("2026-03-01T10:00:00.123Z"),
          updated_at: at("2026-03-02T11:00:00.456Z")
        })
        yield* repo.create(full)
        for (const agent of [full, minimal]) {
          expect(Option.map(yield* repo.get(org.id, agent.id), encodeAgent)).toEqual(Option.some(encodeAgent(agent)))
          expect(Option.map(yield* repo.getForUpdate(org.id, agent.id), encodeAgent)).toEqual(
            Option.some(encodeAgent(agent))
          )
          expect(Option.map(yield* repo.getByTriggerId(org.id, agent.webhook_trigger_id), encodeAgent)).toEqual(
            Option.some(encodeAgent(agent))
          )
        }
        expect(minimal.tools).toBeUndefined()
        expect(yield* repo.get(org.id, AgentId.make(Fixtures.uuid()))).toEqual(Option.none())
        expect(yield* repo.getForUpdate(org.id, AgentId.make(Fixtures.uuid()))).toEqual(Option.none())
        expect(yield* repo.getByTriggerId(org.id, WebhookTriggerId.make(Fixtures.uuid()))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("refuses an agent whose id or webhook trigger id is taken", () =>
      Effect.gen(function*() {
        const { agent, member, org, repo } = yield* setup
        const sameId = makeAgent(org.id, member.id, agent.created_at)
        expect((yield* Effect.flip(repo.create(new Agent.Agent({ ...sameId, id: agent.id }))))._tag).toBe("Conflict")
        const sameTrigger = new Agent.Agent({ ...sameId, webhook_trigger_id: agent.webhook_trigger_id })
        expect((yield* Effect.flip(repo.create(sameTrigger)))._tag).toBe("Conflict")
        expect(yield* repo.get(org.id, sameId.id)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("lists the organization's agents newest first", () =>
      Effect.gen(function*() {
        const { agent, member, org, repo } = yield* setup
        const newer = makeAgent(org.id, member.id, at("2026-03-01T12:00:00.000Z"))
        const sameTimeA = makeAgent(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        const sameTimeB = makeAgent(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        for (const a of [sameTimeA, newer, sameTimeB]) yield* repo.create(a)
        const tied = [sameTimeA.id, sameTimeB.id].sort().reverse()
        expect((yield* repo.list(org.id)).map((a) => a.id)).toEqual([newer.id, ...tied, agent.id])
      }).pipe(Effect.provide(layer)))

    it.effect("update replaces the agent, clearing optional fields that became absent", () =>
      Effect.gen(function*() {
        const { agent, member, org, repo } = yield* setup
        const configured = Agent.update(agent, {
          name: "Renamed",
          tools: ["sql"],
          chat_channel_id: "C999",
          cron_strings: ["0 8 * * *"],
          connector_ids: [ConnectorId.make(7)]
        }, at("2026-03-01T10:00:00.000Z"))
        yield* repo.update(configured)
        expect(Option.map(yield* repo.get(org.id, agent.id), encodeAgent)).toEqual(Option.some(encodeAgent(configured)))
        const cleared = Agent.update(configured, { tools: null, chat_channel_id: null }, at("2026-03-01T11:00:00.000Z"))
        yield* repo.update(cleared)
        const read = yield* repo.get(org.id, agent.id)
        expect(Option.map(read, encodeAgent)).toEqual(Option.some(encodeAgent(cleared)))
        expect(Option.map(read, (a) => [a.tools, a.chat_channel_id])).toEqual(Option.some([undefined, undefined]))
        const unknown = makeAgent(org.id, member.id, agent.created_at)
        expect((yield* Effect.flip(repo.update(unknown)))._tag).toBe("NotFound")
        expect(yield* repo.get(org.id, unknown.id)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("delete removes the agent and its runs, once", () =>
      Effect.gen(function*() {
        const { agent, member, org, repo } = yield* setup
        const sibling = makeAgent(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.create(sibling)
        const run = makeRun(agent, at("2026-03-01T10:00:00.000Z"))
        const siblingRun = makeRun(sibling, at("2026-03-01T10:00:00.000Z"))
        yield* repo.createRun(run)
        yield* repo.createRun(siblingRun)
        expect(yield* repo.delete(org.id, agent.id)).toBe(true)
        expect(yield* repo.get(org.id, agent.id)).toEqual(Option.none())
        expect(yield* repo.getByTriggerId(org.id, agent.webhook_trigger_id)).toEqual(Option.none())
        expect(yield* repo.getRun(org.id, run.id)).toEqual(Option.none())
        expect(yield* repo.delete(org.id, agent.id)).toBe(false)
        expect(Option.map(yield* repo.getRun(org.id, siblingRun.id), encodeRun)).toEqual(
          Option.some(encodeRun(siblingRun))
        )
        expect((yield* repo.list(org.id)).map((a) => a.id)).toEqual([sibling.id])
      }).pipe(Effect.provide(layer)))

    it.effect("listScheduled finds the agents with a schedule in every organization", () =>
      Effect.gen(function*() {
        const { agent, member, org, other, repo } = yield* setup
        const stranger = yield* Fixtures.member(other.id)
        const daily = new Agent.Agent({
          ...makeAgent(org.id, member.id, at("2026-03-01T10:00:00.000Z")),
          cron_strings: ["0 9 * * *"]
        })
        const foreign = new Agent.Agent({
          ...makeAgent(other.id, stranger.id, at("2026-03-01T10:00:00.000Z")),
          cron_strings: ["0 8 * * 1", "0 18 * * 5"]
        })
        yield* repo.create(daily)
        yield* repo.create(foreign)
        const scheduled = (yield* repo.listScheduled()).map((a) => a.id)
        expect(scheduled).toContain(daily.id)
        expect(scheduled).toContain(foreign.id)
        expect(scheduled).not.toContain(agent.id)
      }).pipe(Effect.provide(layer)))

    it.effect("detachConnector removes a connector from the organization's agents only", () =>
      Effect.gen(function*() {
        const { member, org, other, repo } = yield* setup
        const stranger = yield* Fixtures.member(other.id)
        const uses = new Agent.Agent({
          ...makeAgent(org.id, member.id, at("2026-03-01T10:00:00.000Z")),
          connector_ids: [ConnectorId.make(7), ConnectorId.make(8)]
        })
        const foreign = new Agent.Agent({
          ...makeAgent(other.id, stranger.id, at("2026-03-01T10:00:00.000Z")),
          connector_ids: [ConnectorId.make(7)]
        })
        yield* repo.create(uses)
        yield* repo.create(foreign)
        const when = at("2026-04-01T00:00:00.000Z")
        yield* repo.detachConnector(org.id, ConnectorId.make(7), when)
        const after = Option.getOrThrow(yield* repo.get(org.id, uses.id))
        expect(after.connector_ids).toEqual([8])
        expect(after.updated_at).toEqual(when)
        expect(Option.getOrThrow(yield* repo.get(other.id, foreign.id)).connector_ids).toEqual([7])
      }).pipe(Effect.provide(layer)))

    it.effect("an agent of one organization is invisible to every agent method called for another", () =>
      Effect.gen(function*() {
        const { agent, org, other, repo } = yield* setup
        expect(yield* repo.get(other.id, agent.id)).toEqual(Option.none())
        expect(yield* repo.getForUpdate(other.id, agent.id)).toEqual(Option.none())
        expect(yield* repo.getByTriggerId(other.id, agent.webhook_trigger_id)).toEqual(Option.none())
        expect(yield* repo.list(other.id)).toEqual([])
        const hijack = new Agent.Agent({ ...agent, organization_id: other.id, name: "Hijacked" })
        expect((yield* Effect.flip(repo.update(hijack)))._tag).toBe("NotFound")
        expect(yield* repo.delete(other.id, agent.id)).toBe(false)
        expect(Option.map(yield* repo.get(org.id, agent.id), encodeAgent)).toEqual(Option.some(encodeAgent(agent)))
      }).pipe(Effect.provide(layer)))

    it.effect("round-trips every run field through its lifecycle", () =>
      Effect.gen(function*() {
        const { agent, org, repo } = yield* setup
        const payload: Json.JsonObject = {
          event: "invoice.paid",
          amount: 12.5,
          nested: { list: [1, "two", null, true, { deep: "é😀" }], empty: {} },
          flag: false
        }
        const queued = AgentRun.make({
          id: AgentRunId.make(Fixtures.uuid()),
          organizationId: org.id,
          agentId: agent.id,
          triggerSource: "webhook",
          payload,
          at: at("2026-03-01T10:00:00.123Z")
        })
        yield* repo.createRun(queued)
        const read = (id: AgentRunId) => Effect.map(repo.getRun(org.id, id), Option.map(encodeRun))
        expect(yield* read(queued.id)).toEqual(Option.some(encodeRun(queued)))
        expect(Option.map(yield* repo.getRunForUpdate(org.id, queued.id), encodeRun)).toEqual(
          Option.some(encodeRun(queued))
        )
        const running = Either.getOrThrow(
          AgentRun.start(queued, at("2026-03-01T10:00:01.456Z"), ChatId.make(Fixtures.uuid()))
        )
        yield* repo.updateRun(running)
        expect(yield* read(queued.id)).toEqual(Option.some(encodeRun(running)))
        const failed = Either.getOrThrow(AgentRun.fail(running, "model unavailable", at("2026-03-01T10:00:09.789Z")))
        yield* repo.updateRun(failed)
        expect(yield* read(queued.id)).toEqual(Option.some(encodeRun(failed)))

        const minimal = makeRun(agent, at("2026-03-01T11:00:00.000Z"))
        yield* repo.createRun(minimal)
        expect(yield* read(minimal.id)).toEqual(Option.some(encodeRun(minimal)))
        expect((yield* Effect.flip(repo.createRun(new AgentRun.AgentRun({ ...minimal, agent_id: agent.id }))))._tag)
          .toBe("Conflict")
        expect((yield* Effect.flip(repo.updateRun(makeRun(agent, minimal.created_at))))._tag).toBe("NotFound")
        expect(yield* repo.getRun(org.id, AgentRunId.make(Fixtures.uuid()))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("a run of one organization is invisible to every run method called for another", () =>
      Effect.gen(function*() {
        const { agent, org, other, repo } = yield* setup
        const run = makeRun(agent, at("2026-03-01T10:00:00.000Z"))
        yield* repo.createRun(run)
        expect(yield* repo.getRun(other.id, run.id)).toEqual(Option.none())
        expect(yield* repo.getRunForUpdate(other.id, run.id)).toEqual(Option.none())
        expect(runIds(yield* repo.listRuns(other.id, agent.id, { limit: 10 }))).toEqual([])
        const hijack = new AgentRun.AgentRun({
          ...Either.getOrThrow(AgentRun.cancel(run, at("2026-03-01T10:01:00.000Z"))),
          organization_id: other.id
        })
        expect((yield* Effect.flip(repo.updateRun(hijack)))._tag).toBe("NotFound")
        expect(Option.map(yield* repo.getRun(org.id, run.id), encodeRun)).toEqual(Option.some(encodeRun(run)))
      }).pipe(Effect.provide(layer)))

    it.effect("pages an agent's runs by keyset: newest first, ties broken by id, stable under inserts", () =>
      Effect.gen(function*() {
        const { agent, member, org, repo } = yield* setup
        const sibling = makeAgent(org.id, member.id, agent.created_at)
        yield* repo.create(sibling)
        yield* repo.createRun(makeRun(sibling, at("2026-03-01T10:30:00.000Z")))
        const times = ["10:00", "11:00", "11:00", "12:00", "13:00"]
        const rows = times.map((t) => makeRun(agent, at(`2026-03-01T${t}:00.000Z`)))
        for (const row of rows) yield* repo.createRun(row)
        const expected = [...rows]
          .sort((a, b) => Pagination.compareDesc(AgentRun.keyset(a), AgentRun.keyset(b)))
          .map((r) => r.id)

        const first = yield* repo.listRuns(org.id, agent.id, { limit: 2 })
        expect(runIds(first)).toEqual(expected.slice(0, 2))
        const newer = makeRun(agent, at("2026-03-01T14:00:00.000Z"))
        const older = makeRun(agent, at("2026-03-01T09:00:00.000Z"))
        yield* repo.createRun(newer)
        yield* repo.createRun(older)
        const second = yield* repo.listRuns(org.id, agent.id, { limit: 2, after: yield* nextKeyset(first) })
        expect(runIds(second)).toEqual(expected.slice(2, 4))
        const third = yield* repo.listRuns(org.id, agent.id, { limit: 2, after: yield* nextKeyset(second) })
        expect(runIds(third)).toEqual([expected[4], older.id])
        expect(third.nextCursor).toBeUndefined()
        expect(runIds(yield* repo.listRuns(org.id, agent.id, { limit: 10 }))).toEqual([
          newer.id,
          ...expected,
          older.id
        ])
      }).pipe(Effect.provide(layer)))

    it.effect("a failed transaction leaves no agent, run or update behind", () =>
      Effect.gen(function*() {
        const { agent, member, org, repo } = yield* setup
        const discarded = makeAgent(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        const run = makeRun(agent, at("2026-03-01T10:00:00.000Z"))
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* repo.create(discarded)
          yield* repo.createRun(run)
          yield* repo.update(Agent.update(agent, { name: "Changed" }, at("2026-03-01T10:00:00.000Z")))
          return yield* Effect.fail("boom")
        })))
        expect(exit._tag).toBe("Failure")
        expect(yield* repo.get(org.id, discarded.id)).toEqual(Option.none())
        expect(yield* repo.getRun(org.id, run.id)).toEqual(Option.none())
        expect(Option.map(yield* repo.get(org.id, agent.id), encodeAgent)).toEqual(Option.some(encodeAgent(agent)))
      }).pipe(Effect.provide(layer)))
  })
}
