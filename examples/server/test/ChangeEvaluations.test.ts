/**
 * The evaluation checks of library changes over the socket, with the offline model on DEMO: a change
 * that touches `semantic/` or `evals/` is evaluated on the worker against main; one that breaks
 * cases shows them as regressions on the change and, under `rule: checks=evaluations`, cannot
 * merge; its next revision is checked again, passes and merges.
 */
import * as Auth from "@sightline/core/Auth"
import * as Change from "@sightline/core/Change"
import * as Changes from "@sightline/core/Changes"
import * as Library from "@sightline/core/Library"
import { Fixtures } from "@sightline/core/testing"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Schema from "effect/Schema"
import { expect, it } from "vitest"
import { demoConnector } from "./utils/content.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"
import { until } from "./utils/wait.js"

/**
 * Files library edits, made from main's DEMO model, as the organization's admin; a new revision of
 * `changeNumber` when given.
 */
const file = (
  server: TestServer,
  org: Org,
  edits: (demo: string) => Record<string, string>,
  changeNumber?: number
) =>
  server.run(Effect.gen(function*() {
    const admin = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
    const main = yield* (yield* Library.Library).main(admin.organizationId)
    const demo = new TextDecoder().decode(HashMap.unsafeGet(main.files, "semantic/demo.yaml"))
    const filed = yield* (yield* Changes.Changes).create(admin, {
      body: Schema.decodeUnknownSync(Change.CreateLibraryChange)(
        changeNumber === undefined ? { title: "Edit", description: "An edit." } : { change_number: changeNumber }
      ),
      baseRef: main.head,
      edits: Fixtures.edits(edits(demo))
    })
    return { id: filed.change_id as string, number: filed.change_number, gitRef: filed.git_ref }
  }))

const approve = async (server: TestServer, org: Org, change: { readonly id: string; readonly gitRef: string }) => {
  const response = await server.request(`/v2/changes/${change.id}/approve`, {
    method: "POST",
    key: org.key,
    json: { expected_git_ref: change.gitRef }
  })
  expect(response.status).toBe(200)
  return body(response)
}

/** The change once its evaluation check of `revision` finished. */
const evaluated = (server: TestServer, org: Org, id: string, revision: number) =>
  until(`the evaluation check of revision ${revision}`, async () => {
    const change = await body(await server.request(`/v2/changes/${id}`, { key: org.key }))
    const evaluation = change.evaluation
    return evaluation?.revision === revision && ["passed", "failed", "skipped"].includes(evaluation.status)
      ? change
      : undefined
  }, 120_000)

const revenue2025 = "What was revenue in 2025?"
const revenueByChannel = "Revenue by channel in 2024"
const cancelled = "How many orders were cancelled in 2025?"

const retailSet = `name: retail
connector: Demo retail
cases:
  - question: ${revenue2025}
    sql: >-
      SELECT sum(i.line_total) FROM order_items i JOIN orders o ON o.id = i.order_id
      WHERE o.status <> 'cancelled' AND o.ordered_at >= '2025-01-01' AND o.ordered_at < '2026-01-01'
  - question: ${revenueByChannel}
    sql: >-
      SELECT o.channel, sum(i.line_total) FROM order_items i JOIN orders o ON o.id = i.order_id
      WHERE o.status <> 'cancelled' AND o.ordered_at >= '2024-01-01' AND o.ordered_at < '2025-01-01'
      GROUP BY o.channel
  - question: ${cancelled}
    sql: >-
      SELECT count(*) FROM orders
      WHERE status = 'cancelled' AND ordered_at >= '2025-01-01' AND ordered_at < '2026-01-01'
`

// Revenue redefined as units: every revenue answer of the offline model changes.
const revenueMeasure = "      - name: revenue\n        agg: sum\n        expr: line_total\n"
const brokenRevenue = (demo: string) => demo.replace(revenueMeasure, revenueMeasure.replace("line_total", "quantity"))

// On PGlite alone: the checks are the worker's logic over the evaluation runs, whose repositories run
// on both stores in their contract suites (`EvalRunRepoContract`, `ChangeRepoContract`); a second
// store would add a minute and a half of the same evaluations.
describeServers(
  "change evaluation checks",
  (server) => {
    it(
      "shows a change's regressions against main, keeps it from merging under the rule, and checks its next revision",
      async () => {
        const org = await server().newOrg()
        const connectorId = await demoConnector(server(), org)

        // The set and the rule land together; the set's cases are new, and pass with the change.
        const setup = await file(server(), org, () => ({
          "evals/retail.yaml": retailSet,
          "OWNERS": "rule: checks=evaluations\n"
        }))
        const first = await evaluated(server(), org, setup.id, 1)
        // Filed before the rule was on main.
        expect(first.evaluation).toMatchObject({ status: "passed", model: "offline", required: false })
        const firstSets = first.evaluation.sets
        expect(firstSets.map((s: any) => [s.set, s.connector_id])).toEqual([
          ["evals/retail.yaml", connectorId],
          ["semantic/demo.yaml", connectorId]
        ])
        // Main had no retail set yet: it ran with the change only.
        expect(firstSets[0]).toMatchObject({ passed: 3, failed: 0, regressions: [], new_failures: [] })
        expect(firstSets[0].main_run_id).toBeUndefined()
        expect(firstSets[1].main_run_id).toEqual(expect.any(String))
        expect((await approve(server(), org, setup)).merged).toBe(true)

        // A change redefines revenue: the revenue cases fail where main passed them.
        const broken = await file(server(), org, (demo) => ({ "semantic/demo.yaml": brokenRevenue(demo) }))
        const failed = await evaluated(server(), org, broken.id, 1)
        expect(failed.status).toBe("open")
        expect(failed.evaluation).toMatchObject({ status: "failed", required: true, revision: 1 })
        const retail = failed.evaluation.sets.find((s: any) => s.set === "evals/retail.yaml")
        expect(retail).toMatchObject({ passed: 1, failed: 2, new_failures: [] })
        expect([...retail.regressions].sort()).toEqual([revenueByChannel, revenue2025].sort())
        // Each side's run is there to read, case by case, with its difference.
        const run = await body(await server().request(`/v2/evals/runs/${retail.run_id}`, { key: org.key }))
        expect(run).toMatchObject({ change_id: broken.id, commit: failed.evaluation.commit, status: "completed" })
        expect(run.results.find((r: any) => r.question === revenue2025).difference).toEqual(expect.any(String))
        const mainRun = await body(await server().request(`/v2/evals/runs/${retail.main_run_id}`, { key: org.key }))
        expect(mainRun).toMatchObject({ commit: failed.evaluation.main_commit, passed: 3 })

        // Approved, it does not merge: the folder's rule wants the check passed.
        const refused = await approve(server(), org, broken)
        expect(refused).toMatchObject({ merged: false, approval_count: 1, required_approvals: 1 })
        expect(refused.blocked_by).toBe("an OWNERS rule requires the evaluation check to pass, and it failed")
        const demoOnMain = await server().run(Effect.gen(function*() {
          const admin = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
          const main = yield* (yield* Library.Library).main(admin.organizationId)
          return new TextDecoder().decode(HashMap.unsafeGet(main.files, "semantic/demo.yaml"))
        }))
        expect(demoOnMain).toContain(revenueMeasure)

        // The next revision is checked again: the old check is gone, the new one passes, and it merges.
        const fixed = await file(
          server(),
          org,
          (demo) => ({ "semantic/demo.yaml": demo.replace("One row per order.", "One row per order placed.") }),
          broken.number
        )
        const queued = await body(await server().request(`/v2/changes/${broken.id}`, { key: org.key }))
        expect(queued.evaluation.revision).toBe(2)
        const passed = await evaluated(server(), org, broken.id, 2)
        expect(passed.evaluation).toMatchObject({ status: "passed", required: true })
        expect(passed.evaluation.sets.every((s: any) => s.regressions.length === 0)).toBe(true)
        expect(await approve(server(), org, fixed)).toMatchObject({ merged: true })

        // Under the root rule, a change to a note is checked too: otherwise it could never merge.
        const note = await file(server(), org, () => ({ "notes/readme.md": "Our metrics.\n" }))
        const checked = await evaluated(server(), org, note.id, 1)
        expect(checked.evaluation).toMatchObject({ status: "passed", required: true })
        expect(await approve(server(), org, note)).toMatchObject({ merged: true })
      },
      300_000
    )

    it("informs without blocking where no rule requires it, and checks nothing a change does not touch", async () => {
      const org = await server().newOrg()
      await demoConnector(server(), org)
      const notes = await file(server(), org, () => ({ "notes/readme.md": "Our metrics.\n" }))
      const change = await body(await server().request(`/v2/changes/${notes.id}`, { key: org.key }))
      expect(change.evaluation).toBeUndefined()

      // New cases that fail with the change are new failures, not regressions.
      const broken = await file(server(), org, (demo) => ({
        "semantic/demo.yaml": brokenRevenue(demo),
        "evals/retail.yaml": retailSet
      }))
      const failed = await evaluated(server(), org, broken.id, 1)
      expect(failed.evaluation).toMatchObject({ status: "failed", required: false })
      const retail = failed.evaluation.sets.find((s: any) => s.set === "evals/retail.yaml")
      expect(retail).toMatchObject({ passed: 1, failed: 2, regressions: [] })
      expect([...retail.new_failures].sort()).toEqual([revenueByChannel, revenue2025].sort())
      expect(await approve(server(), org, broken)).toMatchObject({ merged: true })
    }, 300_000)
  },
  {},
  ["pglite"]
)
