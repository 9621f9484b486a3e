import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as HashMap from "effect/HashMap"
import * as ChangeEvaluation from "../src/ChangeEvaluation.js"
import * as ChangeEvaluations from "../src/ChangeEvaluations.js"
import type * as Connector from "../src/Connector.js"
import * as EvalRun from "../src/EvalRun.js"
import { ConnectorId, EvalRunId, MemberId, OrganizationId } from "../src/Ids.js"

const at = DateTime.unsafeMake("2026-11-26T00:00:00Z")

const run = (results: ReadonlyArray<readonly [string, boolean]>, status: EvalRun.Status = "completed") =>
  new EvalRun.EvalRun({
    ...EvalRun.make({
      id: EvalRunId.make(crypto.randomUUID()),
      organizationId: OrganizationId.make(crypto.randomUUID()),
      set: "evals/retail.yaml",
      connectorId: ConnectorId.make(1),
      model: "offline",
      createdBy: MemberId.make(crypto.randomUUID()),
      casesTotal: results.length,
      at
    }),
    status,
    results: results.map(([question, passed]) => ({ question, passed, tags: [], latency_ms: 1 }))
  })

describe("ChangeEvaluation", () => {
  it("tells regressions (passed on main) from new failures (not asked on main) and old failures", () => {
    const change = run([["a", false], ["b", false], ["c", true], ["d", false]])
    const main = run([["a", true], ["b", false], ["c", true]])
    const result = ChangeEvaluation.setResult(change, main)
    expect(result).toMatchObject({ passed: 1, failed: 3, regressions: ["a"], new_failures: ["d"] })
    expect(result.main_run_id).toBe(main.id)
    // Without main's run, every failure is new.
    expect(ChangeEvaluation.setResult(change, undefined).new_failures).toEqual(["a", "b", "d"])
  })

  it("passes a check whose only failures fail on main too, and fails one with a regression, a problem or a run not finished", () => {
    const queued = ChangeEvaluation.queued(2, true, at)
    const old = ChangeEvaluation.setResult(run([["b", false]]), run([["b", false]]))
    expect(ChangeEvaluation.finish(queued, [old], [], at).status).toBe("passed")
    const regressed = ChangeEvaluation.setResult(run([["b", false]]), run([["b", true]]))
    expect(ChangeEvaluation.finish(queued, [regressed], [], at).status).toBe("failed")
    const problem = ChangeEvaluation.finish(queued, [old], ["evals/x.yaml:1: cases: is missing"], at)
    expect(problem).toMatchObject({ status: "failed", messages: ["evals/x.yaml:1: cases: is missing"] })
    const cancelled = ChangeEvaluation.setResult(run([], "cancelled"), undefined)
    expect(cancelled.error).toBe("the run with the change cancelled")
    expect(ChangeEvaluation.finish(queued, [cancelled], [], at).status).toBe("failed")
  })

  it("lets a change merge only on a passed check of its current revision", () => {
    const passed = ChangeEvaluation.finish(ChangeEvaluation.queued(2, true, at), [], [], at)
    expect(ChangeEvaluation.passes(passed, 2)).toBe(true)
    expect(ChangeEvaluation.passes(passed, 3)).toBe(false)
    expect(ChangeEvaluation.passes(ChangeEvaluation.queued(2, true, at), 2)).toBe(false)
    expect(ChangeEvaluation.passes(undefined, 1)).toBe(false)
    expect(ChangeEvaluation.evaluates("semantic/demo.yaml")).toBe(true)
    expect(ChangeEvaluation.evaluates("evals/retail.yaml")).toBe(true)
    expect(ChangeEvaluation.evaluates("notes/semantic/a.md")).toBe(false)
  })
})

describe("ChangeEvaluations.pairsOf", () => {
  const connector = (id: number, name: string, type = "DEMO") =>
    ({ id: ConnectorId.make(id), config: { name, connector_type: type } }) as unknown as Connector.ConnectorRecord
  const files = (entries: Record<string, string>) =>
    HashMap.fromIterable(Object.entries(entries).map(([path, text]) => [path, new TextEncoder().encode(text)] as const))

  it("asks a set file on the connector it names, and says why it asks one that names none or one not usable", () => {
    const set = (named?: string) =>
      `${named === undefined ? "" : `connector: ${named}\n`}cases:\n  - question: Q\n    expected: [[1]]\n`
    const found = ChangeEvaluations.pairsOf(
      files({
        "evals/a.yaml": set("Warehouse"),
        "evals/b.yaml": set(),
        "evals/c.yaml": set("Elsewhere"),
        "evals/d.yaml": "cases: []\n"
      }),
      [connector(1, "Demo"), connector(2, "Warehouse")]
    )
    expect(found.pairs).toEqual([{ set: "evals/a.yaml", connectorId: 2 }])
    expect(found.notes).toEqual([
      "evals/b.yaml names no connector: add connector: <name> to ask it on changes",
      "evals/c.yaml names connector Elsewhere, which the author may not use or which does not exist"
    ])
    expect(found.problems).toEqual(["evals/d.yaml:1: cases.0: is missing"])
  })
})
