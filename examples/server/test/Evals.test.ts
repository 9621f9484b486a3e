/**
 * Evaluations over the socket: a set of the library (the DEMO model's verified queries, or an
 * `evals/*.yaml` file merged by a change) run with the offline model on the DEMO connector by the
 * server's worker; each case's result, the accuracy, the differences of failed cases, and the
 * regressions of a run against the one before; who may start runs, and what is refused.
 */
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as Auth from "@sightline/core/Auth"
import * as Change from "@sightline/core/Change"
import * as Changes from "@sightline/core/Changes"
import { RoleId } from "@sightline/core/Ids"
import * as Library from "@sightline/core/Library"
import * as Members from "@sightline/core/Members"
import * as Roles from "@sightline/core/Roles"
import { Fixtures } from "@sightline/core/testing"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { afterAll, expect, it } from "vitest"
import { demoConnector } from "./utils/content.js"
import { newMember } from "./utils/members.js"
import { cli } from "./utils/process.js"
import * as Provider from "./utils/provider.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"

/** Files and merges edits of the library as the organization's admin. */
const merge = (server: TestServer, org: Org, edits: Record<string, string>) =>
  server.run(Effect.gen(function*() {
    const admin = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
    const changes = yield* Changes.Changes
    const main = yield* (yield* Library.Library).main(admin.organizationId)
    const filed = yield* changes.create(admin, {
      body: Schema.decodeUnknownSync(Change.CreateLibraryChange)({ title: "Evals", description: "A set." }),
      baseRef: main.head,
      edits: Fixtures.edits(edits)
    })
    yield* changes.approve(admin, filed.change_id, { expected_git_ref: filed.git_ref })
  }))

/** Polls a run until it finishes. */
const finished = async (server: TestServer, org: Org, id: string) => {
  for (let i = 0; i < 600; i++) {
    const run = await body(await server.request(`/v2/evals/runs/${id}`, { key: org.key }))
    if (["completed", "failed", "cancelled"].includes(run.status)) return run
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`evaluation run ${id} did not finish`)
}

const start = (server: TestServer, key: string, json: unknown) =>
  server.request("/v2/evals/runs", { method: "POST", key, json })

// Each block on one store, PostgreSQL here and PGlite below: evaluations are the worker's logic over
// runs whose repository (`EvalRunRepoContract`) and chats run on both stores in their contract
// suites, and a second store doubled a minute of the same evaluations.
describeServers(
  "evaluations",
  (server) => {
    it("runs the DEMO model's verified queries with the offline model: every case asked, judged and passed", async () => {
      const org = await server().newOrg()
      const connectorId = await demoConnector(server(), org)
      const started = await start(server(), org.key, { set: "semantic/demo.yaml", connector_id: connectorId })
      expect(started.status).toBe(202)
      const queued = await body(started)
      expect(queued).toMatchObject({ status: "queued", model: "offline", set: "semantic/demo.yaml", results: [] })
      expect(queued.cases_total).toBeGreaterThan(10)
      expect(queued.commit).toMatch(/^[0-9a-f]{40}$/)
      const run = await finished(server(), org, queued.id)
      expect(run.error).toBeUndefined()
      expect(run.status).toBe("completed")
      expect(run.results).toHaveLength(queued.cases_total)
      // The offline model answers a verified query's question with the query itself.
      expect(run.results.filter((r: any) => !r.passed)).toEqual([])
      expect(run).toMatchObject({ accuracy: 1, passed: queued.cases_total, failed: 0 })
      for (const result of run.results) {
        expect(result.sql).toEqual(expect.any(String))
        expect(result.chat_id).toEqual(expect.any(String))
        expect(result.expected.length).toBeGreaterThan(0)
      }
      // The first run of a set has nothing to regress from.
      expect(run.regressions).toBeUndefined()
      // The same set with a second model, side by side.
      const other = await finished(
        server(),
        org,
        (await body(
          await start(server(), org.key, {
            set: "semantic/demo.yaml",
            connector_id: connectorId,
            model: "offline-fast"
          })
        )).id
      )
      expect(other).toMatchObject({ status: "completed", model: "offline-fast" })
      // Another model's run is no run to regress from.
      expect(other.compared_with).toBeUndefined()
      const compared = await body(
        await server().request(`/v2/evals/compare?left=${run.id}&right=${other.id}`, { key: org.key })
      )
      expect(compared.left).toMatchObject({ id: run.id, model: "offline", accuracy: 1, passed: queued.cases_total })
      expect(compared.right).toMatchObject({ id: other.id, model: "offline-fast", accuracy: 1 })
      expect(compared.cases).toHaveLength(queued.cases_total)
      expect(compared.cases[0]).toEqual({ question: run.results[0].question, left: true, right: true })
      const listed = await body(await server().request("/v2/evals/runs?set=semantic/demo.yaml", { key: org.key }))
      expect(listed.runs.map((r: any) => r.id)).toEqual([other.id, queued.id])
    })

    it("a set file's failures show their difference, and the next run's regressions against it", async () => {
      const org = await server().newOrg()
      const connectorId = await demoConnector(server(), org)
      const set = (regionsRight: boolean) =>
        [
          "name: basics",
          "cases:",
          "  - question: How many orders were cancelled in 2025?",
          "    sql: SELECT count(*) FROM orders WHERE status = 'cancelled' AND ordered_at >= '2025-01-01' AND ordered_at < '2026-01-01'",
          "    tags: [orders]",
          "  - question: List all regions",
          regionsRight
            ? "    sql: SELECT name FROM regions"
            : "    expected: [[North America], [Europe], [Asia Pacific], [Latin America], [Atlantis]]",
          "  - question: What was the revenue in Atlantis?",
          "    expected: [[1]]",
          ""
        ].join("\n")
      await merge(server(), org, { "evals/basics.yaml": set(true) })
      const first = await finished(
        server(),
        org,
        (await body(await start(server(), org.key, { set: "evals/basics.yaml", connector_id: connectorId }))).id
      )
      expect(first.status).toBe("completed")
      expect(first.results.map((r: any) => [r.question, r.passed])).toEqual([
        ["How many orders were cancelled in 2025?", true],
        ["List all regions", true],
        // Declined: its last table is a lookup of the name that found nothing.
        ["What was the revenue in Atlantis?", false]
      ])
      expect(first.results[0].tags).toEqual(["orders"])
      expect(first.results[2].difference).toBe("expected 1 row, got 0 rows")
      expect(first.accuracy).toBeCloseTo(2 / 3)

      // The set changes: the regions case now expects rows the data lacks.
      await merge(server(), org, { "evals/basics.yaml": set(false) })
      const second = await finished(
        server(),
        org,
        (await body(await start(server(), org.key, { set: "evals/basics.yaml", connector_id: connectorId }))).id
      )
      expect(second.results[1]).toMatchObject({
        passed: false,
        difference: "expected a row [\"Atlantis\"]; no row of the answer holds it",
        expected: [["North America"], ["Europe"], ["Asia Pacific"], ["Latin America"], ["Atlantis"]]
      })
      expect(second.results[1].got).toHaveLength(5)
      expect(second).toMatchObject({ compared_with: first.id, regressions: ["List all regions"], passed: 1, failed: 2 })

      // Read at the first commit, the set is the old one.
      const pinned = await finished(
        server(),
        org,
        (await body(
          await start(server(), org.key, { set: "evals/basics.yaml", connector_id: connectorId, commit: first.commit })
        )).id
      )
      expect(pinned.results[1].passed).toBe(true)
      expect(pinned.commit).toBe(first.commit)
    })

    it("sightline eval run prints each case and the accuracy, and exits 1 on a regression (for a host's CI)", async () => {
      const org = await server().newOrg()
      const connectorId = await demoConnector(server(), org)
      const set = (expected: string) =>
        `cases:\n  - question: How many regions do we sell in?\n    expected: [[${expected}]]\n  - question: List all regions\n    sql: SELECT name FROM regions\n`
      await merge(server(), org, { "evals/ci.yaml": set("5") })
      const args = [
        "eval",
        "run",
        "--set",
        "evals/ci.yaml",
        "--connector",
        String(connectorId),
        "--url",
        server().baseUrl
      ]
      const first = await cli(args, { SVC_API_KEY: org.key })
      expect(first.stderr).toBe("")
      expect(first.code).toBe(0)
      expect(first.stdout).toContain("| 2 | pass | List all regions |  |")
      expect(first.stdout).toMatch(/accuracy (50\.0|100\.0)%/)
      const passedFirst = first.stdout.includes("| 1 | pass |")
      // The right answer changes so that a passing case fails: a regression, exit code 1.
      await merge(server(), org, { "evals/ci.yaml": set("6").replace("SELECT name FROM regions", "SELECT 'Atlantis'") })
      const second = await cli([...args, "--json"], { SVC_API_KEY: org.key })
      expect(second.code).toBe(1)
      const run = JSON.parse(second.stdout.trim())
      expect(run.regressions).toEqual(
        passedFirst ? ["How many regions do we sell in?", "List all regions"] : ["List all regions"]
      )
      expect(second.stderr).toContain("regressions")
      // Without a key, or with a wrong set, it says why.
      expect((await cli(args, {})).stderr).toContain("SVC_API_KEY")
      const wrong = await cli(
        ["eval", "run", "--set", "evals/none.yaml", "--connector", String(connectorId), "--url", server().baseUrl],
        {
          SVC_API_KEY: org.key
        }
      )
      expect(wrong.code).toBe(1)
      expect(wrong.stderr).toContain("the library has no file evals/none.yaml")
    })

    it("refuses what it must: a member, a key bound to client attributes, no such set or model, a foreign run, a finished cancel", async () => {
      const org = await server().newOrg()
      const connectorId = await demoConnector(server(), org)
      const member = await newMember(server(), org)
      expect((await start(server(), member.key, { set: "semantic/demo.yaml", connector_id: connectorId })).status)
        .toBe(403)
      expect((await server().request("/v2/evals/runs", { key: member.key })).status).toBe(403)
      const bound = (await body(
        await server().request("/v2/api-keys", {
          method: "POST",
          key: org.key,
          json: { inheritAllRoles: true, name: "eu", clientId: "{\"region\":\"EU\"}" }
        })
      )).key
      const refused = await start(server(), bound, { set: "semantic/demo.yaml", connector_id: connectorId })
      expect(refused.status).toBe(403)
      expect((await body(refused)).error.message).toContain("client attributes")
      const invalid = async (json: unknown, message: string) => {
        const response = await start(server(), org.key, json)
        expect(response.status).toBe(400)
        expect((await body(response)).error.message).toContain(message)
      }
      await invalid({ set: "evals/none.yaml", connector_id: connectorId }, "the library has no file evals/none.yaml")
      await invalid({ set: "OWNERS", connector_id: connectorId }, "no evaluation set")
      await invalid({ set: "semantic/demo.yaml", connector_id: connectorId, model: "gpt-9" }, "model gpt-9")
      await invalid({ set: "semantic/demo.yaml", connector_id: connectorId, commit: "0".repeat(40) }, "commit")
      await invalid({ set: "semantic/demo.yaml", connector_id: 999_999 }, "connector_id")
      await invalid({ set: "semantic/demo.yaml" }, "connector_id")
      // A huge value is refused without being echoed.
      for (const field of ["set", "model", "commit"]) {
        const huge = await start(server(), org.key, {
          set: "semantic/demo.yaml",
          connector_id: connectorId,
          [field]: `v${"x".repeat(300 * 1024)}`
        })
        expect(huge.status).toBe(400)
        expect((await huge.text()).length).toBeLessThan(2048)
      }

      const run = await body(await start(server(), org.key, { set: "semantic/demo.yaml", connector_id: connectorId }))
      const other = await server().newOrg()
      expect((await server().request(`/v2/evals/runs/${run.id}`, { key: other.key })).status).toBe(404)
      expect((await server().request(`/v2/evals/runs/${run.id}/cancel`, { method: "POST", key: other.key })).status)
        .toBe(404)
      // A member who may manage connectors, but not use this one: no run on it is listed, read,
      // compared or cancelled, and its cases' rows and SQL stay out of sight.
      const manager = await server().run(Effect.gen(function*() {
        const admin = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
        const role = yield* (yield* Roles.Roles).create(admin, {
          name: `connectors-${crypto.randomUUID().slice(0, 8)}`,
          permissions: ["connector:read", "connector:write"]
        })
        const { memberId } = yield* Fixtures.memberWithKey(org.key)
        yield* (yield* Members.Members).assignRole(admin, memberId, { roleId: RoleId.make(role.id) })
        return (yield* (yield* ApiKeys.ApiKeys).bootstrap(admin.organizationId, memberId, "manager")).key
      }))
      expect((await body(await server().request("/v2/evals/runs", { key: manager }))).runs).toEqual([])
      expect((await server().request(`/v2/evals/runs/${run.id}`, { key: manager })).status).toBe(404)
      expect((await server().request(`/v2/evals/runs/${run.id}/cancel`, { method: "POST", key: manager })).status)
        .toBe(404)
      expect((await server().request("/v2/evals/runs", { key: bound })).status).toBe(403)
      const done = await finished(server(), org, run.id)
      expect((await server().request(`/v2/evals/runs/${done.id}`, { key: manager })).status).toBe(404)
      const again = await server().request(`/v2/evals/runs/${done.id}/cancel`, { method: "POST", key: org.key })
      expect(again.status).toBe(409)
    })

    it("a cancel stops a run before its next case", async () => {
      const org = await server().newOrg()
      const connectorId = await demoConnector(server(), org)
      const run = await body(await start(server(), org.key, { set: "semantic/demo.yaml", connector_id: connectorId }))
      const cancelled = await server().request(`/v2/evals/runs/${run.id}/cancel`, { method: "POST", key: org.key })
      expect(cancelled.status).toBe(200)
      expect((await body(cancelled)).status).toBe("cancelled")
      // The worker finds it cancelled and asks nothing more.
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      const after = await body(await server().request(`/v2/evals/runs/${run.id}`, { key: org.key }))
      expect(after.status).toBe("cancelled")
      expect(after.results.length).toBeLessThan(run.cases_total)
    })
  },
  {},
  ["postgres"]
)

// A model that answers each question with the SQL the current test gives it, then a sentence.
let answers: Record<string, string> = {}
const provider = await Provider.start((request) => {
  const last = request.messages.at(-1)
  if (last.role === "tool") return { text: "Here it is." }
  const question = [...request.messages].reverse().find((m: any) => m.role === "user").content
  const connectorId = Number(/Connector (\d+)/.exec(request.messages[0].content)?.[1] ?? 1)
  return {
    toolCalls: [{ name: "run_sql", arguments: { connector_id: connectorId, sql: answers[question] ?? "SELECT 0" } }]
  }
})
afterAll(() => provider.close())

describeServers(
  "evaluations with a provider (scripted Chat Completions server on loopback)",
  (server) => {
    it("a model that answers some cases wrongly: its failures with their differences, then its regressions", async () => {
      const org = await server().newOrg()
      const connectorId = await demoConnector(server(), org)
      await merge(server(), org, {
        "evals/scripted.yaml": [
          "cases:",
          "  - question: How many regions are there?",
          "    sql: SELECT count(*) FROM regions",
          "  - question: How many categories are there?",
          "    sql: SELECT count(*) FROM categories",
          ""
        ].join("\n")
      })
      const runOnce = async () =>
        finished(
          server(),
          org,
          (await body(await start(server(), org.key, { set: "evals/scripted.yaml", connector_id: connectorId }))).id
        )
      answers = {
        "How many regions are there?": "SELECT count(*) AS n FROM regions",
        "How many categories are there?": "SELECT count(*) AS n FROM products"
      }
      const first = await runOnce()
      expect(first).toMatchObject({ status: "completed", model: "scripted", passed: 1, failed: 1 })
      expect(first.results[0]).toMatchObject({ passed: true, sql: "SELECT count(*) AS n FROM regions", got: [[5]] })
      // Each case keeps the tokens its answer spent (two generations, 3 out each from this provider).
      expect(first.results[0]).toMatchObject({ input_tokens: expect.any(Number), output_tokens: 6 })
      expect(first.results[1]).toMatchObject({
        passed: false,
        sql: "SELECT count(*) AS n FROM products",
        expected: [[8]],
        difference: "expected a row [8]; no row of the answer holds it"
      })
      // The model gets the regions wrong too: a regression against the first run.
      answers = { ...answers, "How many regions are there?": "SELECT count(*) AS n FROM customers" }
      const second = await runOnce()
      expect(second).toMatchObject({
        passed: 0,
        failed: 2,
        compared_with: first.id,
        regressions: ["How many regions are there?"]
      })
      expect(second.accuracy).toBe(0)
    })
  },
  { models: { compatibleUrl: provider.url, models: Provider.catalogue } },
  ["pglite"]
)
