/**
 * The runtime tables beyond core's contracts: what a member's hard delete takes with it, timestamps
 * as stored, and the indexes behind sandbox listings.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Agent from "@sightline/core/Agent"
import { AgentRepo } from "@sightline/core/AgentRepo"
import * as AgentRun from "@sightline/core/AgentRun"
import * as App from "@sightline/core/App"
import { AppRepo } from "@sightline/core/AppRepo"
import * as Execution from "@sightline/core/Execution"
import { ExecutionRepo } from "@sightline/core/ExecutionRepo"
import { AgentId, AgentRunId, AppId, ExecutionId, SandboxId, WebhookTriggerId } from "@sightline/core/Ids"
import { MemberRepo } from "@sightline/core/MemberRepo"
import * as Pagination from "@sightline/core/Pagination"
import * as Sandbox from "@sightline/core/Sandbox"
import { SandboxRepo } from "@sightline/core/SandboxRepo"
import { Fixtures } from "@sightline/core/testing"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TablePrefix from "../src/TablePrefix.js"
import { forEachDatabase } from "./utils/databases.js"
import { capturePlans } from "./utils/explain.js"

const at = (iso: string) => DateTime.unsafeMake(iso)

forEachDatabase((database) =>
  describe(`SandboxRepoSql and the runtime tables (${database.name})`, () => {
    it.effect("a member's hard delete erases their sandboxes, executions, agents, runs and apps, nobody else's", () =>
      Effect.gen(function*() {
        const org = yield* Fixtures.organization()
        const [leaving, staying] = [yield* Fixtures.member(org.id), yield* Fixtures.member(org.id)]
        const everything = Effect.forEach([leaving, staying], (member) =>
          Effect.gen(function*() {
            const sandbox = Sandbox.make({
              sandboxId: SandboxId.make(Fixtures.uuid()),
              organizationId: org.id,
              memberId: member.id,
              at: at("2026-03-01T10:00:00.000Z")
            })
            yield* (yield* SandboxRepo).create(sandbox)
            const execution = new Execution.Execution({
              id: ExecutionId.make(`exec-${Fixtures.uuid()}`),
              organization_id: org.id,
              sandbox_id: sandbox.sandbox_id,
              kind: "python",
              source: "chat",
              input: "1",
              output_preview: "1",
              duration_ms: 3,
              created_at: at("2026-03-01T10:00:01.000Z")
            })
            yield* (yield* ExecutionRepo).record(execution)
            const agent = Agent.make({
              id: AgentId.make(Fixtures.uuid()),
              organizationId: org.id,
              ownerId: member.id,
              webhookTriggerId: WebhookTriggerId.make(Fixtures.uuid()),
              request: { name: "Agent", prompt: "Do", connector_ids: [] },
              at: at("2026-03-01T10:00:00.000Z")
            })
            yield* (yield* AgentRepo).create(agent)
            const run = AgentRun.make({
              id: AgentRunId.make(Fixtures.uuid()),
              organizationId: org.id,
              agentId: agent.id,
              triggerSource: "manual",
              at: at("2026-03-01T10:00:00.000Z")
            })
            yield* (yield* AgentRepo).createRun(run)
            const app = App.make({
              id: AppId.make(Fixtures.uuid()),
              organizationId: org.id,
              ownerId: member.id,
              request: { name: "App", code: "" },
              at: at("2026-03-01T10:00:00.000Z")
            })
            yield* (yield* AppRepo).create(app)
            return { sandbox, execution, agent, run, app }
          }))
        const [gone, kept] = yield* everything
        const present = (rows: typeof gone) =>
          Effect.gen(function*() {
            return [
              Option.isSome(yield* (yield* SandboxRepo).get(org.id, rows!.sandbox.sandbox_id)),
              (yield* (yield* ExecutionRepo).list(org.id, rows!.sandbox.sandbox_id, { limit: 5 })).items.length,
              Option.isSome(yield* (yield* AgentRepo).get(org.id, rows!.agent.id)),
              Option.isSome(yield* (yield* AgentRepo).getRun(org.id, rows!.run.id)),
              Option.isSome(yield* (yield* AppRepo).get(org.id, rows!.app.id))
            ]
          })
        expect(yield* present(gone)).toEqual([true, 1, true, true, true])
        yield* (yield* MemberRepo).hardDelete(org.id, leaving.id)
        expect(yield* present(gone)).toEqual([false, 0, false, false, false])
        expect(yield* present(kept)).toEqual([true, 1, true, true, true])
      }).pipe(Effect.provide(database.shared)))

    it.effect("timestamps are stored as timestamptz and read back to the millisecond", () =>
      Effect.gen(function*() {
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const sandbox = Sandbox.heartbeat(
          Sandbox.make({
            sandboxId: SandboxId.make(Fixtures.uuid()),
            organizationId: org.id,
            memberId: member.id,
            at: DateTime.unsafeMake("2026-03-01T10:00:00.123+02:00")
          }),
          at("2026-03-01T08:00:05.999Z")
        )
        yield* (yield* SandboxRepo).create(sandbox)
        const sql = yield* SqlClient.SqlClient
        const prefix = yield* TablePrefix.TablePrefix
        const [row] = yield* sql<{ type: string; utc: string }>`
          SELECT pg_typeof(started_at)::text AS type,
            to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS utc
          FROM ${sql(prefix.name("sandboxes"))} WHERE sandbox_id = ${sandbox.sandbox_id}`
        expect(row).toEqual({ type: "timestamp with time zone", utc: "2026-03-01T08:00:00.123Z" })
        const read = Option.getOrThrow(yield* (yield* SandboxRepo).get(org.id, sandbox.sandbox_id))
        expect(DateTime.formatIso(read.started_at)).toBe("2026-03-01T08:00:00.123Z")
        expect(DateTime.formatIso(read.last_seen_at!)).toBe("2026-03-01T08:00:05.999Z")
      }).pipe(Effect.provide(database.shared)))

    describe("indexes (EXPLAIN of the repository's own statements, thousands of sandboxes)", () => {
      const prefix = database.freshPrefix()
      const store = database.store(prefix)

      it.live("every listing (all, by status, by member) reads an index in order: no sequential scan, no sort", () =>
        Effect.gen(function*() {
          const repo = yield* SandboxRepo
          const orgs = yield* Effect.forEach(Arr.range(1, 10), () =>
            Fixtures.organization())
          yield* Effect.forEach(orgs, (org) => Effect.forEach(Arr.range(1, 3), () => Fixtures.member(org.id)))
          const sql = yield* SqlClient.SqlClient
          const sandboxes = sql(`${prefix}sandboxes`)
          // 400 sandboxes per member, one in four running.
          yield* sql`INSERT INTO ${sandboxes} (sandbox_id, organization_id, member_id, status, started_at, released_at)
            SELECT gen_random_uuid(), m.organization_id, m.id,
              CASE WHEN g % 4 = 0 THEN 'running' ELSE 'stopped' END,
              timestamptz '2026-01-01T00:00:00Z' + g * interval '1 minute',
              CASE WHEN g % 4 = 0 THEN NULL ELSE timestamptz '2026-01-01T00:00:00Z' + g * interval '2 minute' END
            FROM ${sql(`${prefix}members`)} m, generate_series(1, 400) g`
          yield* sql`ANALYZE ${sandboxes}`
          const org = orgs[4]!
          const member = (yield* (yield* MemberRepo).list(org.id))[1]!

          const all = yield* capturePlans(repo.list(org.id, { status: "all", limit: 50 }))
          const after = yield* Pagination.decodeCursor(all.result.nextCursor!)
          const next = yield* capturePlans(repo.list(org.id, { status: "all", limit: 50, after }))
          const running = yield* capturePlans(repo.list(org.id, { status: "running", limit: 50, after }))
          const mine = yield* capturePlans(repo.list(org.id, { status: "all", memberId: member.id, limit: 50, after }))
          for (const { plans, result } of [all, next, running, mine]) {
            expect(result.items).toHaveLength(50)
            expect(plans).toHaveLength(1)
            expect(plans[0]!.plan).toMatch(new RegExp(`Index (Only )?Scan( Backward)? using ${prefix}sandboxes_`))
            expect(plans[0]!.plan).not.toMatch(/Seq Scan|Sort/)
          }
          expect(running.result.items.every((sandbox) => sandbox.status === "running")).toBe(true)
          expect(mine.result.items.every((sandbox) => sandbox.member_id === member.id)).toBe(true)
          expect(next.plans[0]!.plan).toMatch(/Index Cond: .*started_at/)
        }).pipe(Effect.provide(store)), 120_000)
    })
  })
)
