import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ChatEvent from "../src/ChatEvent.js"
import * as ChatEventBus from "../src/ChatEventBus.js"
import { ChatRepo } from "../src/ChatRepo.js"
import * as ChatRuns from "../src/ChatRuns.js"
import * as Chats from "../src/Chats.js"
import * as ChatStreams from "../src/ChatStreams.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

/**
 * The log's reads, with a gate: while `gate.armed`, the next read from the start of a run takes
 * its snapshot, says so, and returns only when released. So a test can hold a read in flight
 * while the log grows.
 */
const gate = {
  /** Reads of the log so far. */
  reads: 0,
  armed: false,
  taken: undefined as Deferred.Deferred<void> | undefined,
  release: undefined as Deferred.Deferred<void> | undefined
}
const GatedRepo = Layer.effect(
  ChatRepo,
  Effect.map(ChatRepo, (repo) =>
    ChatRepo.of({
      ...repo,
      readEvents: (organizationId, chatId, runStart, after) =>
        Effect.flatMap(repo.readEvents(organizationId, chatId, runStart, after), (events) => {
          gate.reads++
          if (!gate.armed || after !== runStart - 1) return Effect.succeed(events)
          gate.armed = false
          return Deferred.succeed(gate.taken!, undefined).pipe(
            Effect.zipRight(Deferred.await(gate.release!)),
            Effect.as(events)
          )
        })
    }))
)

const TestLayer = ChatStreams.layerWith({ idleCheckMillis: 50, staleRunAfter: "1 hour" }).pipe(
  Layer.provideMerge(Layer.merge(Chats.layer, ChatRuns.layer)),
  Layer.provide(GatedRepo),
  Layer.provideMerge(Memory.layer)
)

/** A sink that records what it is handed. */
const recorder = () => {
  const ids: Array<number> = []
  const batches: Array<ReadonlyArray<ChatEvent.Sequenced>> = []
  const state = { ended: false, idle: 0 }
  const sink: ChatStreams.Sink = {
    events: (events) => {
      batches.push(events)
      for (const { id } of events) ids.push(id)
    },
    idle: () => state.idle++,
    end: () => {
      state.ended = true
    }
  }
  return { ids, batches, state, sink }
}

/** A started run, how to log (and announce) its next events, and how to follow it. */
const started = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const roles = yield* Fixtures.systemRoles(org.id)
  const member = yield* Fixtures.member(org.id, { roleIds: [roles.member.id] })
  const principal = yield* Fixtures.principal(org.id, member.id)
  const runs = yield* ChatRuns.ChatRuns
  const bus = yield* ChatEventBus.ChatEventBus
  const { run } = yield* runs.start(principal, { question: "q", model: "offline" })
  let next = run.firstEventId + 1
  const announce = (lastId: number) => bus.publish(ChatEventBus.Announcement.Appended({ chatId: run.chatId, lastId }))
  const text = (value: string) =>
    Effect.gen(function*() {
      const id = next++
      expect(yield* runs.appendEvents(run, [{ id, event: { type: "text", text: value } }])).toBe(true)
      yield* announce(id)
      return id
    })
  const finish = Effect.gen(function*() {
    const done = yield* runs.finish(run, "completed")
    yield* announce(done.id)
    return done.id
  })
  const streams = yield* ChatStreams.ChatStreams
  /** A follower from `lastEventId`, recording what it is handed until `scope` closes. */
  const follow = (scope: Scope.Scope, lastEventId?: number) =>
    Effect.gen(function*() {
      const follower = recorder()
      const subscription = yield* streams.subscribe(principal, run.chatId, lastEventId)
      yield* Effect.forkIn(Scope.extend(subscription(follower.sink), scope), scope)
      return follower
    })
  return { principal, run, text, finish, follow }
})

const waitUntil = (condition: () => boolean): Effect.Effect<void> =>
  Effect.suspend(() =>
    condition()
      ? Effect.void
      : Effect.sleep("5 millis").pipe(Effect.zipRight(Effect.suspend(() => waitUntil(condition))))
  ).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "timed out" }), Effect.orDie)

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe("ChatStreams", () => {
  it.live("followers that join early, mid-run and late each get every event once, in order, to done", () =>
    Effect.gen(function*() {
      const { finish, follow: followIn, run, text } = yield* started
      const scope = yield* Scope.make()
      const follow = (lastEventId?: number) => followIn(scope, lastEventId)
      const early = yield* follow()
      yield* text("a")
      const second = yield* text("b")
      yield* waitUntil(() => early.ids.length === 3)
      const resumed = yield* follow(second)
      const fromStart = yield* follow()
      yield* text("c")
      yield* text("d")
      const done = yield* finish
      yield* waitUntil(() => [early, resumed, fromStart].every((f) => f.state.ended))
      expect(early.ids).toEqual(range(run.firstEventId, done))
      expect(fromStart.ids).toEqual(range(run.firstEventId, done))
      expect(resumed.ids).toEqual(range(second + 1, done))
      // A follower after the end reads the run to done and ends; one resumed at done gets nothing.
      const late = yield* follow()
      yield* waitUntil(() => late.state.ended)
      expect(late.ids).toEqual(range(run.firstEventId, done))
      const past = yield* follow(done)
      yield* waitUntil(() => past.state.ended)
      expect(past.ids).toEqual([])
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(TestLayer)))

  it.live("followers that join a live tail from where it started take its history: no read, the same batches", () =>
    Effect.gen(function*() {
      const { finish, follow: followIn, run, text } = yield* started
      const scope = yield* Scope.make()
      const early = yield* followIn(scope)
      yield* text("a")
      yield* text("b")
      yield* waitUntil(() => early.ids.length === 3)
      const readsBefore = gate.reads
      const joiners = yield* Effect.forEach(range(1, 5), () => followIn(scope))
      // Handed over as they joined, from memory.
      yield* waitUntil(() => joiners.every((joiner) => joiner.ids.length === 3))
      expect(gate.reads).toBe(readsBefore)
      for (const joiner of joiners) {
        expect(joiner.batches.length).toBe(early.batches.length)
        joiner.batches.forEach((batch, i) => expect(batch).toBe(early.batches[i]))
      }
      const done = yield* finish
      yield* waitUntil(() => [early, ...joiners].every((f) => f.state.ended))
      for (const follower of [early, ...joiners]) expect(follower.ids).toEqual(range(run.firstEventId, done))
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(TestLayer)))

  it.live("a follower whose backlog read joins one already in flight still gets the events logged before it joined", () =>
    Effect.gen(function*() {
      const { finish, follow: followIn, run, text } = yield* started
      const scope = yield* Scope.make()
      // The tail starts after the first text (a resumed client), so followers from the start read
      // their backlog from the log.
      const resumedAt = yield* text("a")
      const first = yield* followIn(scope, resumedAt)
      const tailRead = gate.reads
      yield* waitUntil(() => gate.reads > tailRead)
      // The second follower's backlog read takes its snapshot and is held.
      gate.taken = yield* Deferred.make<void>()
      gate.release = yield* Deferred.make<void>()
      gate.armed = true
      const second = yield* followIn(scope)
      yield* Deferred.await(gate.taken)
      // The log grows and the tail hands that on; then a third follower joins, and its backlog
      // read joins the held one, whose snapshot predates the new event.
      const logged = yield* text("while a read was held")
      yield* waitUntil(() => first.ids.includes(logged))
      const third = yield* followIn(scope)
      yield* Deferred.succeed(gate.release, undefined)
      const done = yield* finish
      yield* waitUntil(() => [first, second, third].every((f) => f.state.ended))
      expect(first.ids).toEqual(range(resumedAt + 1, done))
      for (const follower of [second, third]) expect(follower.ids).toEqual(range(run.firstEventId, done))
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(TestLayer)))

  it.live("an idle tail tells its followers, and a follower that leaves stops nobody else", () =>
    Effect.gen(function*() {
      const { finish, follow, run, text } = yield* started
      const outer = yield* Scope.make()
      const staying = yield* follow(outer)
      const inner = yield* Scope.make()
      const leaving = yield* follow(inner)
      yield* waitUntil(() => staying.state.idle >= 2 && leaving.state.idle >= 2)
      yield* Scope.close(inner, Exit.void)
      const seen = leaving.ids.length
      yield* text("after one left")
      const done = yield* finish
      yield* waitUntil(() => staying.state.ended)
      expect(staying.ids).toEqual(range(run.firstEventId, done))
      expect(leaving.ids.length).toBe(seen)
      expect(leaving.state.ended).toBe(false)
      yield* Scope.close(outer, Exit.void)
    }).pipe(Effect.provide(TestLayer)))

  it.live("follow: the same events as a stream", () =>
    Effect.gen(function*() {
      const streams = yield* ChatStreams.ChatStreams
      const { finish, principal, run, text } = yield* started
      yield* text("a")
      const events = yield* Effect.fork(
        Stream.runCollect(yield* streams.follow(principal, run.chatId, undefined))
      )
      yield* text("b")
      const done = yield* finish
      const collected = Array.from(yield* Fiber.join(events))
      expect(collected.map(({ id }) => id)).toEqual(range(run.firstEventId, done))
      expect(ChatEvent.isDone(collected.at(-1)!.event)).toBe(true)
    }).pipe(Effect.provide(TestLayer)))
})
