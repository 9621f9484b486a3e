/**
 * The chat event bus port: announcements that a chat's log grew or that its run was cancelled,
 * delivered to every server process. They are hints, never data: a follower that hears one reads
 * the log (`ChatRepo.readEvents`), and a run that hears of a cancel checks the store (its
 * heartbeat), so an announcement that is lost or late costs time, never an event.
 *
 * `layer` announces within this process (one process, such as the embedded PGlite server); the sql
 * package's `ChatEventBusPg` carries announcements between processes with PostgreSQL LISTEN/NOTIFY.
 *
 * A subscriber says whether it wants a chat's appends (a follower does) or only its cancel (the run
 * itself, which wrote the appends). A bus may announce a chat's appends only while some process
 * wants them: most answers have no follower, and their appends then cost no announcement.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type { ChatId } from "./Ids.js"

/**
 * What happened to a chat.
 *
 * @since 0.1.0
 * @category models
 */
export type Announcement = Data.TaggedEnum<{
  /** The chat's log now reaches `lastId`. */
  Appended: { readonly chatId: ChatId; readonly lastId: number }
  /** The chat's run was cancelled (the process running it must stop it). */
  Cancelled: { readonly chatId: ChatId }
}>

/**
 * Constructors of `Announcement`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Announcement = Data.taggedEnum<Announcement>()

/**
 * Announces chat events to every process.
 *
 * @since 0.1.0
 * @category services
 */
export class ChatEventBus extends Context.Tag("@sightline/core/ChatEventBus")<ChatEventBus, ChatEventBus.Service>() {}

export declare namespace ChatEventBus {
  /** The bus. */
  export interface Service {
    /**
     * Announces to every subscriber of the chat, on every process (this one included). A bus whose
     * store announces each append itself as it commits (`ChatEventBusPg`) need not send an
     * `Appended` again.
     */
    readonly publish: (announcement: Announcement) => Effect.Effect<void>
    /**
     * The announcements of one chat from now until the scope closes. The queue keeps only the latest
     * few: a slow reader misses hints, never events, and never slows the publisher. Once it returns,
     * every append that commits afterwards is announced to it (unless `appended` is false).
     */
    readonly subscribe: (
      chatId: ChatId,
      options?: SubscribeOptions
    ) => Effect.Effect<Queue.Dequeue<Announcement>, never, Scope.Scope>
  }

  /** What a subscriber wants to hear. */
  export interface SubscribeOptions {
    /** Also the chat's appends (default true); false: its cancel only. */
    readonly appended?: boolean | undefined
  }
}

/**
 * How many announcements a subscriber's queue keeps before it drops the oldest.
 *
 * @since 0.1.0
 * @category constants
 */
export const subscriberCapacity = 8

/**
 * The subscribers of this process, by chat: what every bus implementation delivers to.
 *
 * @since 0.1.0
 * @category models
 */
export interface Registry {
  /** Hands an announcement to this process's subscribers of its chat. */
  readonly deliver: (announcement: Announcement) => Effect.Effect<void>
  /** `deliver`, at once and outside any fiber: for a bus that hears announcements in a callback. */
  readonly unsafeDeliver: (announcement: Announcement) => void
  readonly subscribe: ChatEventBus.Service["subscribe"]
}

/** One subscriber of the registry. */
interface Subscriber {
  readonly queue: Queue.Queue<Announcement>
  readonly appended: boolean
}

/**
 * A registry of this process's subscribers.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeRegistry: Effect.Effect<Registry> = Effect.sync(() => {
  const subscribers = new Map<ChatId, Set<Subscriber>>()
  const deliver = (announcement: Announcement) =>
    Effect.suspend(() => {
      const found = subscribers.get(announcement.chatId)
      if (found === undefined) return Effect.void
      const appended = announcement._tag === "Appended"
      return Effect.forEach(
        found,
        (subscriber) => appended && !subscriber.appended ? Effect.void : Queue.offer(subscriber.queue, announcement),
        { discard: true }
      )
    })
  const subscribe = (chatId: ChatId, options?: ChatEventBus.SubscribeOptions) =>
    Effect.acquireRelease(
      Effect.map(Queue.sliding<Announcement>(subscriberCapacity), (queue) => {
        const subscriber: Subscriber = { queue, appended: options?.appended !== false }
        const found = subscribers.get(chatId) ?? new Set()
        found.add(subscriber)
        subscribers.set(chatId, found)
        return subscriber
      }),
      (subscriber) =>
        Effect.zipRight(
          Effect.sync(() => {
            const found = subscribers.get(chatId)
            found?.delete(subscriber)
            if (found?.size === 0) subscribers.delete(chatId)
          }),
          Queue.shutdown(subscriber.queue)
        )
    ).pipe(Effect.map((subscriber): Queue.Dequeue<Announcement> => subscriber.queue))
  // A chat nobody follows here (most announcements, on most processes) costs one lookup. Offering
  // to a sliding queue never waits, so the delivery runs to its end where it is called.
  const unsafeDeliver = (announcement: Announcement) => {
    if (subscribers.has(announcement.chatId)) Effect.runSync(deliver(announcement))
  }
  return { deliver, unsafeDeliver, subscribe }
})

/**
 * A bus within this process: right for a single server process (and for tests).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ChatEventBus.Service> = Effect.map(
  makeRegistry,
  (registry) => ({ publish: registry.deliver, subscribe: registry.subscribe })
)

/**
 * The in-process bus.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ChatEventBus> = Layer.effect(ChatEventBus, make)
