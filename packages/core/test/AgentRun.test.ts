import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as AgentRun from "../src/AgentRun.js"
import { AgentId, AgentRunId, ChatId, OrganizationId } from "../src/Ids.js"
import { JsonObject } from "../src/Json.js"

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const t0 = DateTime.unsafeMake("2026-03-01T10:00:00.000Z")
const t1 = DateTime.add(t0, { seconds: 1 })
const t2 = DateTime.add(t0, { seconds: 2 })

const queued = AgentRun.make({
  id: AgentRunId.make(id(1)),
  organizationId: OrganizationId.make(id(2)),
  agentId: AgentId.make(id(3)),
  triggerSource: "webhook",
  payload: { order: 42 },
  at: t0
})
const running = Either.getOrThrow(AgentRun.start(queued, t1, ChatId.make(id(4))))

/** One way of making each move, so every (status, target) pair can be tried. */
const moves = {
  running: (run: AgentRun.AgentRun) => AgentRun.start(run, t2),
  completed: (run: AgentRun.AgentRun) => AgentRun.complete(run, t2),
  failed: (run: AgentRun.AgentRun) => AgentRun.fail(run, "boom", t2),
  cancelled: (run: AgentRun.AgentRun) => AgentRun.cancel(run, t2)
} as const

/** The spec's lifecycle, written out independently of `AgentRun.transitions`. */
const legal = new Set([
  "queued>running",
  "queued>cancelled",
  "running>completed",
  "running>failed",
  "running>cancelled"
])

const inStatus = (status: AgentRun.Status): AgentRun.AgentRun =>
  status === "queued" ? queued : status === "running" ? running : Either.getOrThrow(moves[status](running))

describe("AgentRun lifecycle", () => {
  it("a new run is queued with its payload and no timing beyond creation", () => {
    expect(queued).toMatchObject({
      status: "queued",
      trigger_source: "webhook",
      payload: { order: 42 },
      created_at: t0
    })
    expect(queued.started_at).toBeUndefined()
    expect(queued.finished_at).toBeUndefined()
  })

  it("start records the start time and the chat", () => {
    expect(running).toMatchObject({ status: "running", started_at: t1, chat_id: id(4) })
    expect(running.finished_at).toBeUndefined()
  })

  it("finishing records the end time, and the error of a failure", () => {
    expect(Either.getOrThrow(AgentRun.complete(running, t2))).toMatchObject({ status: "completed", finished_at: t2 })
    expect(Either.getOrThrow(AgentRun.fail(running, "model unavailable", t2))).toMatchObject({
      status: "failed",
      error: "model unavailable",
      finished_at: t2
    })
    const cancelledEarly = Either.getOrThrow(AgentRun.cancel(queued, t2))
    expect(cancelledEarly).toMatchObject({ status: "cancelled", finished_at: t2 })
    expect(cancelledEarly.started_at).toBeUndefined()
  })

  for (const from of AgentRun.Status.literals) {
    for (const to of Object.keys(moves) as Array<keyof typeof moves>) {
      const allowed = legal.has(`${from}>${to}`)
      it(`${from} → ${to} is ${allowed ? "allowed" : "a Conflict"}`, () => {
        const run = inStatus(from)
        expect(run.status).toBe(from)
        const result = moves[to](run)
        expect(AgentRun.canTransition(from, to)).toBe(allowed)
        if (allowed) {
          expect(Either.getOrThrow(result).status).toBe(to)
        } else {
          const error = Either.flip(result).pipe(Either.getOrThrow)
          expect(error._tag).toBe("Conflict")
          expect(error.message).toContain(`it is ${from}`)
          expect(error.message).toContain(run.id)
        }
      })
    }
  }

  it("only completed, failed and cancelled runs are finished", () => {
    expect(AgentRun.Status.literals.filter(AgentRun.isFinished)).toEqual(["completed", "failed", "cancelled"])
  })
})

describe("AgentRun schemas", () => {
  const decodeObject = Schema.decodeUnknownEither(JsonObject)

  it("a payload is a JSON object of JSON values", () => {
    const payload = { a: 1, b: [true, null, "x", { c: -2.5 }], d: {} }
    expect(Either.getOrThrow(decodeObject(payload))).toEqual(payload)
    for (const bad of [[1, 2], "text", 3, null, { n: Number.NaN }, { n: Infinity }, { f: () => 1 }, { u: undefined }]) {
      expect(Either.isLeft(decodeObject(bad))).toBe(true)
    }
  })

  it("the served view leaves the organization out and round-trips the payload", () => {
    const encoded = Schema.encodeSync(AgentRun.View)(running)
    expect(encoded).not.toHaveProperty("organization_id")
    expect(encoded).toMatchObject({
      id: id(1),
      status: "running",
      payload: { order: 42 },
      started_at: "2026-03-01T10:00:01.000Z"
    })
    expect(Schema.encodeSync(AgentRun.View)(Schema.decodeUnknownSync(AgentRun.View)(encoded))).toEqual(encoded)
  })

  it("list params default the limit to 50 and bound it to 1..200", () => {
    expect(Schema.decodeUnknownSync(AgentRun.ListParams)({})).toEqual({ limit: 50 })
    expect(Either.isLeft(Schema.decodeUnknownEither(AgentRun.ListParams)({ limit: "201" }))).toBe(true)
  })
})
