/**
 * Core's `ChatEventBus` between server processes, over PostgreSQL LISTEN/NOTIFY: each process
 * keeps one listening connection on the channel `<prefix>chat_events` and hands what it hears to
 * its own subscribers. A notification is a few dozen bytes (`a <chat id> <last id>` or
 * `c <chat id>`), far below NOTIFY's 8000-byte limit, because announcements are only hints: the
 * events themselves are read from the log.
 *
 * A lost listening connection is opened again (announcements sent meanwhile are missed, which
 * followers and runs make up for with their periodic checks).
 *
 * An `Appended` is announced by the log itself: the trigger of migration 14 notifies with each
 * stored batch, in the writing transaction, so PostgreSQL sends it at commit and a run's batch is
 * one statement, not two. `publish` therefore sends only `Cancelled`, and does not wait for
 * PostgreSQL: a run must not wait on a round trip for a hint. One sender sends what has been
 * published meanwhile in one statement.
 *
 * The trigger notifies only for a chat that some process watches (migration 15): a subscriber that
 * wants appends makes its process a watcher of the chat (a row in `<prefix>chat_watchers`, written
 * before `subscribe` returns), until the process's last such subscriber of the chat leaves. The
 * rows of a process are renewed while it lives and expire `Options.watchTtlSeconds` after it died. A watch
 * that could not be written costs its subscriber announcements (it reads the log at its own pace),
 * never events.
 *
 * @since 0.1.0
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { SqlError } from "@effect/sql/SqlError"
import * as ChatEventBus from "@sightline/core/ChatEventBus"
import { ChatId } from "@sightline/core/Ids"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Pg from "pg"
import { TablePrefix } from "./TablePrefix.js"

/**
 * The payload of an announcement (an `Appended` one is also written by the log's trigger, migration 14).
 *
 * @since 0.1.0
 * @category utils
 */
export const encode = (announcement: ChatEventBus.Announcement): string =>
  announcement._tag === "Appended" ? `a ${announcement.chatId} ${announcement.lastId}` : `c ${announcement.chatId}`

/**
 * An announcement from its payload; undefined for anything else.
 *
 * @since 0.1.0
 * @category utils
 */
export const decode = (payload: string): ChatEventBus.Announcement | undefined => {
  const [kind, chatId, lastId] = payload.split(" ")
  if (chatId === undefined) return undefined
  if (kind === "c") return ChatEventBus.Announcement.Cancelled({ chatId: ChatId.make(chatId) })
  if (kind === "a" && lastId !== undefined && /^\d+$/.test(lastId)) {
    return ChatEventBus.Announcement.Appended({ chatId: ChatId.make(chatId), lastId: Number(lastId) })
  }
  return undefined
}

// The listening connection, made as the pool's connections are (from the client's config).
const listeningClient = (config: PgClient.PgClientConfig) =>
  new Pg.Client({
    connectionString: config.url === undefined ? undefined : Redacted.value(config.url),
    host: config.host,
    port: config.port,
    database: config.database,
    user: config.username,
    password: config.password === undefined ? undefined : Redacted.value(config.password),
    ssl: config.ssl,
    application_name: config.applicationName
  })

/**
 * Listens on a connection of its own and hands each payload on in the connection's own callback,
 * until the connection is lost (a failure, for the caller to listen again) or the listening is
 * interrupted. Every process hears every announcement of its prefix, most of them for chats
 * nobody follows there: through `PgClient.listen`'s stream one cost about 0.4 ms of CPU (a fiber's
 * wake-up and a stream's step, per process and announcement), and that stream never ended when its
 * connection was lost, so a process stopped hearing for good.
 */
const listen = (
  config: PgClient.PgClientConfig,
  channel: string,
  heard: (payload: string) => void
): Effect.Effect<never, SqlError> =>
  Effect.async<never, SqlError>((resume) => {
    const client = listeningClient(config)
    let over = false
    const lost = (cause: unknown) => {
      if (over) return
      over = true
      resume(Effect.fail(new SqlError({ cause, message: "chat event bus: the listening connection was lost" })))
    }
    client.on("error", lost)
    client.on("end", () => lost(new Error("the connection ended")))
    client.on("notification", (message) => {
      if (message.channel === channel && message.payload !== undefined) heard(message.payload)
    })
    client.connect().then(() => client.query(`LISTEN ${Pg.escapeIdentifier(channel)}`)).catch(lost)
    return Effect.promise(() => {
      over = true
      return client.end().catch(() => undefined)
    }).pipe(Effect.timeoutOption(1000))
  })

/**
 * Options of the bus.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How long a process's watch of a chat lasts without being renewed (it is renewed at a third of it). */
  readonly watchTtlSeconds: number
}

/**
 * The defaults: a watch lasts a minute unless renewed.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions: Options = { watchTtlSeconds: 60 }

/**
 * The bus over the `PgClient` in context, with the given options; it listens until its scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (options: Options) =>
  Effect.gen(function*() {
    const { watchTtlSeconds } = options
    const pg = yield* PgClient.PgClient
    const prefix = yield* TablePrefix
    const channel = prefix.name("chat_events")
    const registry = yield* ChatEventBus.makeRegistry

    // This process's watches: its rows, and how many of its subscribers want each chat's appends.
    // Watching and unwatching take turns, so that a chat's last subscriber leaving never deletes the
    // row a new one has just written.
    const listener = crypto.randomUUID()
    const watchers = pg(prefix.name("chat_watchers"))
    const watching = new Map<ChatId, number>()
    const turn = yield* Effect.makeSemaphore(1)
    const warn = (message: string) => (cause: unknown) => Effect.logWarning(`chat event bus: ${message}`, cause)
    // Writes (or extends) this process's watch of each chat; a watch and a renewal are the same row.
    const upsert = (chatIds: ReadonlyArray<ChatId>) =>
      pg`INSERT INTO ${watchers} (chat_id, listener, expires_at)
         SELECT chat_id, ${listener}, now() + make_interval(secs => ${watchTtlSeconds})
         FROM unnest(${chatIds}::uuid[]) AS chat_id
         ON CONFLICT (chat_id, listener) DO UPDATE SET expires_at = excluded.expires_at`
    const watch = (chatId: ChatId) =>
      turn.withPermits(1)(Effect.suspend(() => {
        watching.set(chatId, (watching.get(chatId) ?? 0) + 1)
        return upsert([chatId])
      })).pipe(Effect.catchAllCause(warn("a chat could not be watched")))
    const unwatch = (chatId: ChatId) =>
      turn.withPermits(1)(Effect.suspend(() => {
        const left = (watching.get(chatId) ?? 1) - 1
        if (left > 0) {
          watching.set(chatId, left)
          return Effect.void
        }
        watching.delete(chatId)
        return pg`DELETE FROM ${watchers} WHERE chat_id = ${chatId} AND listener = ${listener}`
      })).pipe(Effect.catchAllCause(warn("a watch could not be ended")))
    // Renews this process's rows (written again if they were taken for a dead process's, after a
    // long stall), and removes those of processes that stopped renewing theirs.
    yield* turn.withPermits(1)(
      Effect.suspend(() => watching.size === 0 ? Effect.void : upsert(Array.from(watching.keys())))
    ).pipe(
      Effect.zipRight(pg`DELETE FROM ${watchers} WHERE expires_at < now()`),
      Effect.catchAllCause(warn("watches could not be renewed")),
      Effect.zipRight(Effect.sleep(Duration.seconds(watchTtlSeconds / 3))),
      Effect.forever,
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() =>
      pg`DELETE FROM ${watchers} WHERE listener = ${listener}`.pipe(
        Effect.catchAllCause(warn("watches could not be ended")),
        Effect.timeoutOption(1000)
      )
    )

    yield* listen(pg.config, channel, (payload) => {
      const announcement = decode(payload)
      if (announcement !== undefined) registry.unsafeDeliver(announcement)
    }).pipe(
      Effect.tapErrorCause((cause) => Effect.logWarning("chat event bus: listening failed; listening again", cause)),
      Effect.retry(Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")))),
      Effect.forkScoped
    )

    // What waits for the sender, by chat; `wake` holds at most one "there is more".
    const pending = new Map<string, ChatEventBus.Announcement>()
    const wake = yield* Queue.sliding<void>(1)
    // `pg_notify` rather than the client's `NOTIFY channel, $1`: a utility statement takes no parameters.
    const send = (payloads: ReadonlyArray<string>) =>
      pg`SELECT pg_notify(${channel}, payload) FROM unnest(${payloads}::text[]) AS payload`.pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("chat event bus: announcements were not sent", cause))
      )
    yield* Queue.take(wake).pipe(
      Effect.zipRight(Effect.suspend(() => {
        const payloads = Array.from(pending.values(), encode)
        pending.clear()
        return send(payloads)
      })),
      Effect.forever,
      Effect.forkScoped
    )

    return ChatEventBus.ChatEventBus.of({
      // Every process hears it, this one included, through its own listening connection. An append
      // was announced by its own statement already.
      publish: (announcement) =>
        announcement._tag === "Appended" ? Effect.void : Effect.suspend(() => {
          pending.set(announcement.chatId, announcement)
          return Queue.offer(wake, undefined)
        }),
      subscribe: (chatId, options) =>
        options?.appended === false
          ? registry.subscribe(chatId, options)
          : Effect.zipRight(
            Effect.acquireRelease(watch(chatId), () => unwatch(chatId)),
            registry.subscribe(chatId, options)
          )
    })
  })

/**
 * The bus over the `PgClient` in context; it listens until its scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = makeWith(defaultOptions)

/**
 * The bus over the `PgClient` and `TablePrefix` in context, with the given options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (
  options: Options
): Layer.Layer<ChatEventBus.ChatEventBus, never, PgClient.PgClient | TablePrefix> =>
  Layer.scoped(ChatEventBus.ChatEventBus, makeWith(options))

/**
 * The bus over the `PgClient` and `TablePrefix` in context, with the default options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ChatEventBus.ChatEventBus, never, PgClient.PgClient | TablePrefix> = layerWith(
  defaultOptions
)
