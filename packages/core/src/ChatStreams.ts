/**
 * Following a chat's answer: `GET /v2/chats/{id}/stream`. A follower reads the chat's event log
 * (`ChatRepo.readEvents`) from where it stopped, then waits for the bus to announce more, on
 * whichever process runs the answer. It reads the log at its own pace, so a slow follower never
 * slows the run or the other followers, and an announcement it misses only delays it: it still
 * reads the log every `idleCheckMillis`.
 *
 * While it waits it also watches the run's heartbeat: a run whose process died is ended by the
 * first follower that notices (`Chats.endStaleRun`), and every follower then reads its `done`.
 *
 * Ids go on across a chat's runs (`Chats.Run.firstEventId`), so `Last-Event-ID` names one event:
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
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as ChatEvent from "./ChatEvent.js"
import * as ChatEventBus from "./ChatEventBus.js"
import { ChatRepo } from "./ChatRepo.js"
import * as Chats from "./Chats.js"
import type { NotFound, PermissionDenied, Unauthenticated } from "./Errors.js"
import type { ChatId, OrganizationId } from "./Ids.js"
import type * as Policy from "./Policy.js"

/** Options of the followers. */
export interface Options {
  /** How long a follower waits without an announcement before it reads the log and the heartbeat again. */
  readonly idleCheckMillis: number
  /** When a run is stale; the same limit as `Chats.Options.staleRunAfter`. */
  readonly staleRunAfter: Duration.DurationInput
}

/** The defaults: a look every 2 s without news, and the chats' stale limit. */
export const defaultOptions: Options = { idleCheckMillis: 2_000, staleRunAfter: Chats.defaultOptions.staleRunAfter }

/** Follows chats' answers. */
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
  }
}

/** Builds the followers with the given options. */
export const makeWith = (options: Options) =>
  Effect.gen(function*() {
    const chats = yield* Chats.Chats
    const repo = yield* ChatRepo
    const bus = yield* ChatEventBus.ChatEventBus

    // Followers of one chat that stand at the same event share one read of the log: a thousand
    // followers of a run cost one read per stored batch, not a thousand.
    const reads = new Map<string, Deferred.Deferred<ReadonlyArray<ChatEvent.Sequenced>>>()
    const readShared = (organizationId: OrganizationId, id: ChatId, runStart: number, after: number) =>
      Effect.suspend(() => {
        const key = `${id}:${runStart}:${after}`
        const pending = reads.get(key)
        if (pending !== undefined) return Deferred.await(pending)
        return Effect.flatMap(Deferred.make<ReadonlyArray<ChatEvent.Sequenced>>(), (deferred) => {
          reads.set(key, deferred)
          return repo.readEvents(organizationId, id, runStart, after).pipe(
            Effect.exit,
            Effect.tap((exit) => Effect.zipRight(Effect.sync(() => reads.delete(key)), Deferred.done(deferred, exit))),
            Effect.flatten,
            Effect.uninterruptible
          )
        })
      })

    const follow = Effect.fn("ChatStreams.follow")(function*(
      principal: Policy.Principal,
      id: ChatId,
      lastEventId: number | undefined
    ) {
      const chat = yield* chats.visible(principal, id)
      const organizationId = chat.organization_id
      const latest = yield* repo.latestRun(organizationId, id)
      if (Option.isNone(latest)) return Stream.empty
      const runStart = latest.value.start
      const from = lastEventId !== undefined && lastEventId >= runStart ? lastEventId : runStart - 1
      // Resumed at or past the end of a finished run: nothing is left to say.
      if (from >= latest.value.last) {
        const last = yield* repo.readEvents(organizationId, id, runStart, latest.value.last - 1)
        if (last.some((sequenced) => ChatEvent.isDone(sequenced.event))) return Stream.empty
      }

      // Without news for a while: is the run's process still there? A stale run is ended (once,
      // by whichever follower gets there first) and its `done` is then in the log.
      const checkLiveness = Effect.gen(function*() {
        const now = yield* DateTime.now
        const current = yield* repo.get(organizationId, id)
        if (Option.exists(current, (c) => Chats.isStale(c, now, options.staleRunAfter))) {
          yield* chats.endStaleRun(organizationId, id)
        }
      })

      return Stream.unwrapScoped(Effect.gen(function*() {
        // Subscribed before the first read: whatever is appended after it is announced to us.
        const announcements = yield* bus.subscribe(id)
        let after = from
        let waited = false
        const wait = Queue.take(announcements).pipe(
          Effect.repeat({
            until: (announcement) => announcement._tag === "Appended" && announcement.lastId > after
          }),
          Effect.timeout(Duration.millis(options.idleCheckMillis)),
          Effect.catchTag("TimeoutException", () => checkLiveness)
        )
        const next = Effect.gen(function*() {
          if (waited) yield* wait
          const events = yield* readShared(organizationId, id, runStart, after)
          waited = events.length === 0
          if (events.length > 0) after = events[events.length - 1]!.id
          return events
        })
        return Stream.repeatEffect(next).pipe(
          Stream.flattenIterables,
          Stream.takeUntil((sequenced) => ChatEvent.isDone(sequenced.event))
        )
      }))
    })

    return ChatStreams.of({ follow })
  })

/** The followers with the default options. */
export const layer: Layer.Layer<ChatStreams, never, Chats.Chats | ChatRepo | ChatEventBus.ChatEventBus> = Layer.effect(
  ChatStreams,
  makeWith(defaultOptions)
)

/** The followers with other options (shorter checks in tests). */
export const layerWith = (
  options: Options
): Layer.Layer<ChatStreams, never, Chats.Chats | ChatRepo | ChatEventBus.ChatEventBus> =>
  Layer.effect(ChatStreams, makeWith(options))
