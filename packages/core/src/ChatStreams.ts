/**
 * Following a chat's answer: `GET /v2/chats/{id}/stream`.
 *
 * The followers of one run on one process share a tail: one fiber that waits for the bus to
 * announce news (from whichever process runs the answer), reads the chat's event log
 * (`ChatRepo.readEvents`) once, and hands the new events to every follower. An announcement the
 * tail misses only delays it: it reads the log every `idleCheckMillis` without news. A follower
 * that joins mid-run first reads what it missed from the log, then takes the tail's events; each
 * event reaches it once, in order. So a thousand followers of an answer cost one subscription, one
 * read per batch and one liveness check, and each costs little more than its connection.
 *
 * Events are pushed to a follower's sink and never wait for it, so a slow follower never slows the
 * run or the others: what it has not taken yet waits in its own buffer, which holds references to
 * the events all followers share (at most one run's events).
 *
 * While idle the tail also watches the run's heartbeat: a run whose process died is ended
 * (`ChatRuns.endStaleRun`, by the first process that notices), and every follower then gets its `done`.
 *
 * Ids go on across a chat's runs (`ChatRuns.Run.firstEventId`), so `Last-Event-ID` names one event:
 * - absent, the stream starts with the current (latest) run's `metadata`;
 * - in the current run, it resumes right after that event;
 * - before the current run (the client's run is over and another started), it starts with the
 *   current run, whose `metadata` says it is another answer.
 * The stream ends with the run's `done`; a finished run is replayed to its `done` (or, resumed past
 * it, ends at once). Asset URLs are replayed as the run signed them (valid for the URL lifetime,
 * an hour by default); `GET /v2/chats/{id}` signs them afresh.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ChatEvent from "./ChatEvent.js"
import * as ChatEventBus from "./ChatEventBus.js"
import { ChatRepo } from "./ChatRepo.js"
import * as ChatRuns from "./ChatRuns.js"
import * as Chats from "./Chats.js"
import type { NotFound, PermissionDenied, Unauthenticated } from "./Errors.js"
import type { ChatId, OrganizationId } from "./Ids.js"
import type * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"

/**
 * Options of the followers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * How long a run's tail waits without an announcement before it reads the log and the heartbeat
   * again (and tells its followers they are idle).
   */
  readonly idleCheckMillis: number
  /** When a run is stale; the same limit as `Chats.Options.staleRunAfter`. */
  readonly staleRunAfter: Duration.DurationInput
}

/**
 * The defaults: a look every 2 s without news, and the chats' stale limit.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions: Options = { idleCheckMillis: 2_000, staleRunAfter: Chats.defaultOptions.staleRunAfter }

/**
 * Where a follower's events go. Calls are synchronous and in order; a sink must not block (it
 * buffers, as a response stream does).
 *
 * @since 0.1.0
 * @category models
 */
export interface Sink {
  /** The next events, each once and in order; the last one ever handed over is the run's `done`. */
  readonly events: (events: ReadonlyArray<ChatEvent.Sequenced>) => void
  /** Nothing happened for `idleCheckMillis`: a chance to keep a connection alive. */
  readonly idle: () => void
  /**
   * Following is over: after `done`, or when the log could not be read (the client resumes from
   * the last event it got).
   */
  readonly end: () => void
}

/**
 * Hands a chat's events to `sink` until they end or the scope closes.
 *
 * @since 0.1.0
 * @category models
 */
export type Subscription = (sink: Sink) => Effect.Effect<void, never, Scope.Scope>

/**
 * Follows chats' answers.
 *
 * @since 0.1.0
 * @category services
 */
export class ChatStreams extends Context.Tag("@sightline/core/ChatStreams")<ChatStreams, ChatStreams.Service>() {}

export declare namespace ChatStreams {
  /** The operations. */
  export interface Service {
    /**
     * `GET /v2/chats/{id}/stream` (`chat:read`, the chat's creator only): the current run's events
     * after `lastEventId`, then live to `done`. Empty for a chat that has no logged run.
     */
    readonly follow: (
      principal: Policy.Principal,
      id: ChatId,
      lastEventId: number | undefined
    ) => Effect.Effect<Stream.Stream<ChatEvent.Sequenced>, Unauthenticated | PermissionDenied | NotFound>
    /**
     * `follow` for servers that hold many followers: the same checks and events, pushed to a sink
     * instead of pulled through a stream (no fiber or stream per follower).
     */
    readonly subscribe: (
      principal: Policy.Principal,
      id: ChatId,
      lastEventId: number | undefined
    ) => Effect.Effect<Subscription, Unauthenticated | PermissionDenied | NotFound>
  }
}

/** One follower of a tail. */
interface Member {
  readonly sink: Sink
  /** The last event it was handed. */
  after: number
  /** While it reads its backlog: the tail's events since it joined, handed over after the backlog. */
  pending: Array<ChatEvent.Sequenced> | undefined
  ended: boolean
}

/** The followers of one run on this process, and how far their shared reading has got. */
interface Tail {
  readonly members: Set<Member>
  /** Where its reading started: the event after this one was its first. */
  readonly start: number
  /**
   * Every batch it has handed on, in order, as the arrays it handed on: a follower that joins from
   * `start` or later takes its backlog from here, not from the log, and is handed the same objects
   * as the others (so a response frames each batch once, however many carry it).
   */
  readonly history: Array<ReadonlyArray<ChatEvent.Sequenced>>
  /** The last event read from the log and handed to the members. */
  after: number
  fiber: Fiber.RuntimeFiber<void> | undefined
  /** Its fiber has stopped: nothing more will come from it. */
  stopped: boolean
}

const nothingToSay: Subscription = (sink) => Effect.sync(sink.end)

/** Hands `member` the events it has not had; ends it at `done`. */
const handOver = (member: Member, events: ReadonlyArray<ChatEvent.Sequenced>) => {
  if (member.ended) return
  let from = 0
  while (from < events.length && events[from]!.id <= member.after) from++
  if (from === events.length) return
  const fresh = from === 0 ? events : events.slice(from)
  const last = fresh[fresh.length - 1]!
  member.after = last.id
  member.sink.events(fresh)
  if (ChatEvent.isDone(last.event)) end(member)
}

const end = (member: Member) => {
  if (member.ended) return
  member.ended = true
  member.sink.end()
}

/**
 * Builds the followers with the given options.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (options: Options) =>
  Effect.gen(function*() {
    const chats = yield* Chats.Chats
    const runs = yield* ChatRuns.ChatRuns
    const repo = yield* ChatRepo
    const bus = yield* ChatEventBus.ChatEventBus
    // The tails' fibers: interrupted (and their followers ended) when the layer closes.
    const fibers = yield* FiberSet.make<void>()

    // Reads of the log that stand at the same event share one query: the tail's, and the backlogs
    // of followers that join at the same point. A read joined while in flight may have started
    // before the caller's point in time, so it can end short of what the caller knows is logged;
    // `fresh` starts a new query (that others may join) instead.
    const reads = new Map<string, Deferred.Deferred<ReadonlyArray<ChatEvent.Sequenced>>>()
    const read = (organizationId: OrganizationId, id: ChatId, runStart: number, after: number, fresh: boolean) =>
      Effect.suspend(() => {
        const key = `${id}:${runStart}:${after}`
        const pending = reads.get(key)
        if (pending !== undefined && !fresh) return Deferred.await(pending)
        return Effect.flatMap(Deferred.make<ReadonlyArray<ChatEvent.Sequenced>>(), (deferred) => {
          reads.set(key, deferred)
          return repo.readEvents(organizationId, id, runStart, after).pipe(
            Effect.exit,
            Effect.tap((exit) =>
              Effect.zipRight(
                Effect.sync(() => {
                  if (reads.get(key) === deferred) reads.delete(key)
                }),
                Deferred.done(deferred, exit)
              )
            ),
            Effect.flatten,
            Effect.uninterruptible
          )
        })
      })

    // The tails of this process, by chat and run.
    const tails = new Map<string, Tail>()

    // Is the run's process still there? A stale run is ended (once, by whichever process gets
    // there first) and its `done` is then in the log.
    const checkLiveness = (organizationId: OrganizationId, id: ChatId) =>
      Effect.gen(function*() {
        const now = yield* DateTime.now
        const current = yield* repo.get(organizationId, id)
        if (Option.exists(current, (c) => Chats.isStale(c, now, options.staleRunAfter))) {
          yield* runs.endStaleRun(organizationId, id)
        }
      })

    /** Reads the run's log as it grows and hands it to the tail's members, until `done` or none is left. */
    const runTail = (tail: Tail, key: string, organizationId: OrganizationId, id: ChatId, runStart: number) =>
      Effect.gen(function*() {
        // Subscribed before the first read: whatever is appended after it is announced to us.
        const announcements = yield* bus.subscribe(id)
        const news = Queue.take(announcements).pipe(
          Effect.repeat({
            until: (announcement) => announcement._tag === "Appended" && announcement.lastId > tail.after
          }),
          Effect.timeout(Duration.millis(options.idleCheckMillis))
        )
        let waited = false
        while (tail.members.size > 0) {
          if (waited && Option.isNone(yield* Effect.option(news))) {
            for (const member of tail.members) member.sink.idle()
            yield* checkLiveness(organizationId, id)
          }
          const events = yield* read(organizationId, id, runStart, tail.after, true)
          waited = events.length === 0
          if (events.length === 0) continue
          const last = events[events.length - 1]!
          tail.after = last.id
          tail.history.push(events)
          // The run is over: a follower that joins from now on starts a tail of its own.
          if (ChatEvent.isDone(last.event) && tails.get(key) === tail) tails.delete(key)
          for (const member of tail.members) {
            if (member.pending === undefined) handOver(member, events)
            else for (const event of events) member.pending.push(event)
          }
          if (ChatEvent.isDone(last.event)) return
        }
      }).pipe(
        Effect.scoped,
        // However the tail stops (done, no followers, a failed read, shutdown), nobody is left
        // waiting on it; a member still reading its backlog hands over what it read first.
        Effect.ensuring(Effect.sync(() => {
          tail.stopped = true
          if (tails.get(key) === tail) tails.delete(key)
          for (const member of tail.members) if (member.pending === undefined) end(member)
        }))
      )

    const leave = (tail: Tail, key: string, member: Member) =>
      Effect.suspend(() => {
        tail.members.delete(member)
        if (tail.members.size > 0) return Effect.void
        if (tails.get(key) === tail) tails.delete(key)
        return tail.fiber === undefined ? Effect.void : Fiber.interruptFork(tail.fiber)
      })

    /** Joins (or starts) the run's tail from `from`, and hands `sink` the events after it. */
    const join = (organizationId: OrganizationId, id: ChatId, runStart: number, from: number): Subscription => (sink) =>
      Effect.gen(function*() {
        const key = `${id}:${runStart}`
        const member: Member = { sink, after: from, pending: undefined, ended: false }
        const existing = tails.get(key)
        const tail: Tail = existing ??
          { members: new Set(), start: from, history: [], after: from, fiber: undefined, stopped: false }
        if (existing === undefined) tails.set(key, tail)
        tail.members.add(member)
        // Not `Effect.addFinalizer`, which keeps the joining request's fiber refs (its whole context)
        // for the finalizer: with thousands of followers, that is a copy of the context each.
        yield* Scope.addFinalizer(yield* Effect.scope, leave(tail, key, member))
        if (existing === undefined) {
          // Interruptible, unlike this join: it waits on timeouts and is stopped when its followers leave.
          tail.fiber = yield* FiberSet.run(
            fibers,
            Effect.interruptible(runTail(tail, key, organizationId, id, runStart))
          )
          return
        }
        // Joined at or after where the tail started: its history holds the backlog, and handing it
        // over here, in one synchronous step, leaves no gap before the tail's next batch.
        if (from >= tail.start) {
          for (const batch of tail.history) handOver(member, batch)
          return
        }
        member.pending = []
        // Joined a tail that started after us: the backlog from the log up to where the tail stood
        // when we joined, then what the tail read since. Together they miss nothing, and
        // `handOver` skips what was already handed over.
        const joinedAt = tail.after
        while (member.after < joinedAt && !member.ended) {
          const backlog = yield* Effect.exit(read(organizationId, id, runStart, member.after, false))
          if (backlog._tag === "Failure") return end(member)
          // Empty only when a shared read started before those events were logged: read afresh.
          if (backlog.value.length === 0) {
            const again = yield* Effect.exit(read(organizationId, id, runStart, member.after, true))
            if (again._tag === "Failure" || again.value.length === 0) return end(member)
            handOver(member, again.value)
          } else {
            handOver(member, backlog.value)
          }
        }
        const pending = member.pending ?? []
        member.pending = undefined
        handOver(member, pending)
        // The tail stopped without a `done` for us (a failed read, shutdown) while we read.
        if (tail.stopped) end(member)
      }).pipe(Effect.uninterruptible)

    const subscribe = Traced.fn("ChatStreams.subscribe")(function*(
      principal: Policy.Principal,
      id: ChatId,
      lastEventId: number | undefined
    ) {
      const chat = yield* chats.visible(principal, id)
      const organizationId = chat.organization_id
      // A follower's trace links to the request that started the run it follows.
      const started = Traced.spanOfTraceparent(chat.run_traceparent)
      if (started !== undefined) {
        const span = yield* Effect.option(Effect.currentSpan)
        if (span._tag === "Some") span.value.addLinks([{ _tag: "SpanLink", span: started, attributes: {} }])
      }
      const latest = yield* repo.latestRun(organizationId, id)
      if (Option.isNone(latest)) return nothingToSay
      const runStart = latest.value.start
      const from = lastEventId !== undefined && lastEventId >= runStart ? lastEventId : runStart - 1
      // Resumed at or past the end of a finished run: nothing is left to say.
      if (from >= latest.value.last) {
        const last = yield* repo.readEvents(organizationId, id, runStart, latest.value.last - 1)
        if (last.some((sequenced) => ChatEvent.isDone(sequenced.event))) return nothingToSay
      }
      return join(organizationId, id, runStart, from)
    })

    const follow = (principal: Policy.Principal, id: ChatId, lastEventId: number | undefined) =>
      Effect.map(subscribe(principal, id, lastEventId), (subscription) =>
        Stream.asyncPush<ChatEvent.Sequenced>(
          (emit) =>
            subscription({
              // A copy: the stream's buffer may append to the array it is handed, and the tail
              // hands the same array to every follower.
              events: (events) => emit.array(events.slice()),
              idle: () => {},
              end: () => emit.end()
            }),
          { bufferSize: "unbounded" }
        ))

    return ChatStreams.of({ follow, subscribe })
  })

/**
 * The followers with the default options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  ChatStreams,
  never,
  Chats.Chats | ChatRuns.ChatRuns | ChatRepo | ChatEventBus.ChatEventBus
> = Layer
  .scoped(
    ChatStreams,
    makeWith(defaultOptions)
  )

/**
 * The followers with other options (shorter checks in tests).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (
  options: Options
): Layer.Layer<ChatStreams, never, Chats.Chats | ChatRuns.ChatRuns | ChatRepo | ChatEventBus.ChatEventBus> =>
  Layer.scoped(ChatStreams, makeWith(options))
