/**
 * The chat repository port: chats and, stored beside them, their messages, cells and assets.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Ref from "effect/Ref"
import type { AssetRecord } from "./Asset.js"
import * as Chat from "./Chat.js"
import type * as ChatEvent from "./ChatEvent.js"
import { Conflict, NotFound } from "./Errors.js"
import type { AssetId, CellId, ChatId, MemberId, MessageId, OrganizationId } from "./Ids.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores chats, messages, cells and assets.
 *
 * @since 0.1.0
 * @category services
 */
export class ChatRepo extends Context.Tag("@sightline/core/ChatRepo")<ChatRepo, ChatRepo.Service>() {}

export declare namespace ChatRepo {
  /** Which chats a listing returns. */
  export interface ListOptions {
    readonly limit: number
    readonly offset: number
    /**
     * A case-insensitive substring (taken literally: `%` and `_` are not wildcards) of the summary or
     * of the first user message. Empty or omitted: no filter.
     */
    readonly searchTerm?: string | undefined
    /** `name` sorts by the summary, case-insensitively; ties are broken by id in the same direction. */
    readonly sortBy: Chat.ChatSortField
    readonly sortDirection: Chat.SortDirection
    /** Only the chats this member created. */
    readonly creatorId?: MemberId | undefined
    /** Only the chats made in this audience (`Audience`; `""` is the audience without attributes). */
    readonly audience?: string | undefined
  }

  /** A listed chat with its preview (the first user message cut to 200 characters, or ""). */
  export interface ListRow {
    readonly chat: Chat.ChatRecord
    readonly preview: string
  }

  /** A page of chats and how many match in all. */
  export interface ListResult {
    readonly rows: ReadonlyArray<ListRow>
    readonly totalCount: number
  }

  /** Which cells a listing returns (newest first). */
  export interface CellPageRequest {
    readonly limit: number
    readonly offset: number
  }

  /** A page of cells and whether more follow. */
  export interface CellPage {
    readonly cells: ReadonlyArray<Chat.CellRecord>
    readonly hasMore: boolean
  }

  /** The latest run of a chat's event log: the id of its first event (`metadata`) and of its last. */
  export interface RunLog {
    readonly start: number
    readonly last: number
  }

  /**
   * Events of a run to append to its chat's log. Their ids are consecutive and the first follows
   * the log's last id (ids increase across the runs of a chat, so one id names one event of the chat).
   */
  export interface EventBatch {
    readonly organizationId: OrganizationId
    readonly chatId: ChatId
    /** The id of the run's first event. */
    readonly runStart: number
    readonly events: Arr.NonEmptyReadonlyArray<ChatEvent.Sequenced>
  }

  /**
   * Chat storage. Ids are unique across organizations. Messages, cells and assets belong to a chat
   * of their `organization_id`: writing one for a chat that is absent there is `NotFound`.
   */
  export interface Service {
    /** Stores a new chat; an id that already exists is a `Conflict`. */
    readonly create: (chat: Chat.ChatRecord) => Effect.Effect<void, Conflict>
    readonly get: (organizationId: OrganizationId, id: ChatId) => Effect.Effect<Option.Option<Chat.ChatRecord>>
    /** `get` that locks the chat until the surrounding transaction ends (starting or ending a run). */
    readonly getForUpdate: (
      organizationId: OrganizationId,
      id: ChatId
    ) => Effect.Effect<Option.Option<Chat.ChatRecord>>
    /** A page of the organization's chats with the total number of matches. */
    readonly list: (organizationId: OrganizationId, options: ListOptions) => Effect.Effect<ListResult>
    /**
     * Deletes every chat of this creator in this audience, with its messages, cells, assets and
     * events, and answers their ids (an end user's chats, when the host forgets the end user).
     */
    readonly deleteMany: (
      organizationId: OrganizationId,
      owner: { readonly creatorId: MemberId; readonly audience: string }
    ) => Effect.Effect<ReadonlyArray<ChatId>>
    /**
     * Writes the mutable fields of a chat: `summary`, `status`, `connector_ids` and `updated_at` (its
     * creator, model, source and creation time never change). `NotFound` when the organization has no such chat.
     */
    readonly update: (chat: Chat.ChatRecord) => Effect.Effect<void, NotFound>

    /**
     * Ends a run with its answer in one step (the end of every answer waits on it): appends the
     * run's `events` not yet logged and the `done` event to the log under the next ids (in the run
     * starting at `runStart`), the assistant `message`, stores its `cell` and sets the chat
     * `completed` at `at`, only while the chat is `running`, its latest user message is
     * `userMessageId`, the message id is new and the first of `events` (if any) takes the log's
     * next id. The `done` event's id; none, with nothing written, otherwise.
     */
    readonly completeRun: (input: {
      readonly message: Chat.MessageRecord
      readonly cell: Chat.CellRecord
      readonly userMessageId: MessageId
      readonly at: DateTime.Utc
      readonly runStart: number
      readonly events: ReadonlyArray<ChatEvent.Sequenced>
      readonly done: ChatEvent.Done
    }) => Effect.Effect<Option.Option<number>>

    /**
     * Appends events of a run to its chat's log, only while the chat is `running`, the run is its
     * latest or a newer one (`runStart` at least the latest run's start) and the first id follows
     * the log's last. False, with nothing written, otherwise: the run was ended by someone else
     * (a cancel, a stale-run sweep, a newer run), or another writer took the ids. In SQL the chat
     * row is share-locked, so an append never slips between a terminal write's check and its commit.
     */
    readonly appendEvents: (batch: EventBatch) => Effect.Effect<boolean>
    /** The chat's latest run in its log; none when the chat has no events (or is of another organization). */
    readonly latestRun: (organizationId: OrganizationId, chatId: ChatId) => Effect.Effect<Option.Option<RunLog>>
    /** The events of the run starting at `runStart` whose id is above `after`, in order. */
    readonly readEvents: (
      organizationId: OrganizationId,
      chatId: ChatId,
      runStart: number,
      after: number
    ) => Effect.Effect<ReadonlyArray<ChatEvent.Sequenced>>
    /**
     * A running run's heartbeat: sets the chat's `updated_at` to `at` while it is `running` and
     * `runStart` is its latest run. False, with nothing written, once the run is over.
     */
    readonly heartbeat: (input: {
      readonly organizationId: OrganizationId
      readonly chatId: ChatId
      readonly runStart: number
      readonly at: DateTime.Utc
    }) => Effect.Effect<boolean>
    /** Appends a message; an existing message id is a `Conflict`. */
    readonly appendMessage: (message: Chat.MessageRecord) => Effect.Effect<void, NotFound | Conflict>
    /** A chat's messages in the order they were appended (empty for a chat of another organization). */
    readonly listMessages: (
      organizationId: OrganizationId,
      chatId: ChatId
    ) => Effect.Effect<ReadonlyArray<Chat.MessageRecord>>

    /**
     * Stores a cell, or replaces the stored cell with its id (a step is written when it starts and
     * again when it ends). A cell id already used by another chat is a `Conflict`.
     */
    readonly upsertCell: (cell: Chat.CellRecord) => Effect.Effect<void, NotFound | Conflict>
    /**
     * A page of a chat's cells, newest first: `created_at` descending, and among equal timestamps the
     * cell first stored last. Replacing a cell keeps its place.
     */
    readonly listCells: (
      organizationId: OrganizationId,
      chatId: ChatId,
      page: CellPageRequest
    ) => Effect.Effect<CellPage>
    readonly getCell: (
      organizationId: OrganizationId,
      chatId: ChatId,
      cellId: CellId
    ) => Effect.Effect<Option.Option<Chat.CellRecord>>

    /** Stores an asset; an existing asset id is a `Conflict`. */
    readonly addAsset: (asset: AssetRecord) => Effect.Effect<void, NotFound | Conflict>
    /**
     * A chat's assets, oldest first (`created_at`, then the order they were added); with
     * `messageCellIds`, only those of these answers (`message_cell_id`).
     */
    readonly listAssets: (
      organizationId: OrganizationId,
      chatId: ChatId,
      messageCellIds?: ReadonlyArray<CellId>
    ) => Effect.Effect<ReadonlyArray<AssetRecord>>
    readonly getAsset: (organizationId: OrganizationId, id: AssetId) => Effect.Effect<Option.Option<AssetRecord>>
    /**
     * The asset with this id in whichever organization it lives. Only for serving a signed asset URL,
     * which carries no bearer token: its signature already proves the holder was given the asset.
     */
    readonly findAssetForSignedUrl: (id: AssetId) => Effect.Effect<Option.Option<AssetRecord>>
  }
}

const chatOrder = (sortBy: Chat.ChatSortField, direction: Chat.SortDirection): Order.Order<Chat.ChatRecord> => {
  const key: Order.Order<Chat.ChatRecord> = sortBy === "name"
    ? Order.mapInput(Order.string, (chat) => chat.summary.toLowerCase())
    : sortBy === "created_at"
    ? Order.mapInput(DateTime.Order, (chat) => chat.created_at)
    : Order.mapInput(DateTime.Order, (chat) => chat.updated_at)
  const order = Order.combine(key, Order.mapInput(Order.string, (chat: Chat.ChatRecord) => chat.id))
  return direction === "asc" ? order : Order.reverse(order)
}

// A stored chat's fields but its connectors, which `update` writes (absent: none).
const omitConnectors = ({ connector_ids: _, ...rest }: Chat.ChatRecord) => rest

const includesFolded = (text: string, term: string) => text.toLowerCase().includes(term.toLowerCase())

interface Tables {
  readonly chats: HashMap.HashMap<ChatId, Chat.ChatRecord>
  /** Per chat, in append order. */
  readonly messages: HashMap.HashMap<ChatId, ReadonlyArray<Chat.MessageRecord>>
  /** Per chat, in the order first stored. */
  readonly cells: HashMap.HashMap<ChatId, ReadonlyArray<Chat.CellRecord>>
  /** In the order added. */
  readonly assets: ReadonlyArray<AssetRecord>
  /** Per chat, the event log in id order, each event with the start of its run. */
  readonly events: HashMap.HashMap<ChatId, ReadonlyArray<LoggedEvent>>
}

interface LoggedEvent {
  readonly runStart: number
  readonly event: ChatEvent.Sequenced
}

const latestOf = (log: ReadonlyArray<LoggedEvent>): Option.Option<ChatRepo.RunLog> =>
  Option.map(Arr.last(log), (last) => ({ start: last.runStart, last: last.event.id }))

/**
 * Chats in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<ChatRepo, never, MemoryState> = Layer.effect(
  ChatRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table<Tables>({
      chats: HashMap.empty(),
      messages: HashMap.empty(),
      cells: HashMap.empty(),
      assets: [],
      events: HashMap.empty()
    })

    const findChat = (tables: Tables, organizationId: OrganizationId, id: ChatId) =>
      HashMap.get(tables.chats, id).pipe(Option.filter((chat) => chat.organization_id === organizationId))

    const get = (organizationId: OrganizationId, id: ChatId) =>
      state.run(Effect.map(Ref.get(table), (tables) => findChat(tables, organizationId, id)))

    // Every child write checks its chat first, as the SQL adapter's composite foreign key does.
    const withChat = <A, E>(
      organizationId: OrganizationId,
      chatId: ChatId,
      f: (tables: Tables) => Effect.Effect<A, E>
    ): Effect.Effect<A, E | NotFound> =>
      state.run(
        Effect.flatMap(Ref.get(table), (tables): Effect.Effect<A, E | NotFound> =>
          Option.isSome(findChat(tables, organizationId, chatId))
            ? f(tables)
            : Effect.fail(new NotFound({ message: `chat ${chatId} not found` })))
      )

    const logOf = (tables: Tables, chatId: ChatId): ReadonlyArray<LoggedEvent> =>
      Option.getOrElse(HashMap.get(tables.events, chatId), () => [])

    // The rule of `appendEvents`: the chat runs, the run is the latest or newer, the ids follow on.
    const canAppend = (
      tables: Tables,
      organizationId: OrganizationId,
      chatId: ChatId,
      runStart: number,
      first: number
    ) =>
      Option.exists(findChat(tables, organizationId, chatId), (chat) => chat.status === "running") &&
      Option.match(latestOf(logOf(tables, chatId)), {
        onNone: () => first === 1,
        onSome: (latest) => latest.start <= runStart && latest.last + 1 === first
      })

    const withEvents = (tables: Tables, chatId: ChatId, runStart: number, events: ReadonlyArray<ChatEvent.Sequenced>) =>
      HashMap.set(tables.events, chatId, [...logOf(tables, chatId), ...events.map((event) => ({ runStart, event }))])

    const firstUserMessage = (tables: Tables, chatId: ChatId) =>
      HashMap.get(tables.messages, chatId).pipe(
        Option.flatMap(Arr.findFirst((message) => message.role === "user")),
        Option.map((message) => message.content)
      )

    return {
      create: (chat) =>
        state.run(Effect.flatMap(Ref.get(table), (tables) =>
          HashMap.has(tables.chats, chat.id)
            ? Effect.fail(new Conflict({ message: `chat ${chat.id} already exists` }))
            : Ref.set(table, { ...tables, chats: HashMap.set(tables.chats, chat.id, chat) }))),

      get,
      getForUpdate: get,

      list: (organizationId, options) =>
        state.run(Effect.map(Ref.get(table), (tables) => {
          const term = options.searchTerm ?? ""
          const matches = Arr.filterMap(Array.from(HashMap.values(tables.chats)), (chat) => {
            if (chat.organization_id !== organizationId) return Option.none()
            if (options.creatorId !== undefined && chat.creator_id !== options.creatorId) return Option.none()
            if (options.audience !== undefined && (chat.audience ?? "") !== options.audience) return Option.none()
            const first = firstUserMessage(tables, chat.id)
            if (
              term !== "" && !includesFolded(chat.summary, term) &&
              !Option.exists(first, (content) => includesFolded(content, term))
            ) return Option.none()
            return Option.some({ chat, preview: Chat.previewOf(Option.getOrElse(first, () => "")) })
          })
          const sorted = Arr.sort(
            matches,
            Order.mapInput(chatOrder(options.sortBy, options.sortDirection), (row: ChatRepo.ListRow) => row.chat)
          )
          return {
            rows: sorted.slice(options.offset, options.offset + options.limit),
            totalCount: matches.length
          }
        })),

      deleteMany: (organizationId, owner) =>
        state.run(Effect.flatMap(Ref.get(table), (tables) => {
          const ids = Array.from(HashMap.values(tables.chats)).filter((chat) =>
            chat.organization_id === organizationId && chat.creator_id === owner.creatorId &&
            (chat.audience ?? "") === owner.audience
          ).map((chat) => chat.id)
          const gone = new Set<ChatId>(ids)
          return Effect.as(
            Ref.set(table, {
              chats: HashMap.removeMany(tables.chats, ids),
              messages: HashMap.removeMany(tables.messages, ids),
              cells: HashMap.removeMany(tables.cells, ids),
              assets: tables.assets.filter((asset) => !gone.has(asset.chat_id)),
              events: HashMap.removeMany(tables.events, ids)
            }),
            ids
          )
        })),

      update: (chat) =>
        state.run(
          Effect.flatMap(Ref.get(table), (tables) =>
            Option.match(findChat(tables, chat.organization_id, chat.id), {
              onNone: () => Effect.fail(new NotFound({ message: `chat ${chat.id} not found` })),
              onSome: (stored) =>
                Ref.set(table, {
                  ...tables,
                  chats: HashMap.set(
                    tables.chats,
                    chat.id,
                    new Chat.ChatRecord({
                      ...omitConnectors(stored),
                      summary: chat.summary,
                      status: chat.status,
                      ...(chat.connector_ids === undefined ? {} : { connector_ids: chat.connector_ids }),
                      updated_at: chat.updated_at
                    })
                  )
                })
            }))
        ),

      completeRun: ({ at, cell, done, events, message, runStart, userMessageId }) =>
        state.run(Effect.flatMap(Ref.get(table), (tables) => {
          const chat = findChat(tables, message.organization_id, message.chat_id)
          const history = Option.getOrElse(HashMap.get(tables.messages, message.chat_id), () => [])
          const latestUser = Arr.findLast(history, (m) => m.role === "user")
          const taken = Array.from(HashMap.values(tables.messages)).flat().some((m) => m.id === message.id)
          if (
            Option.isNone(chat) || chat.value.status !== "running" || taken ||
            !Option.exists(latestUser, (m) => m.id === userMessageId)
          ) return Effect.succeed(Option.none())
          const next = Option.match(latestOf(logOf(tables, message.chat_id)), {
            onNone: () => 1,
            onSome: (latest) => latest.last + 1
          })
          if (events.length > 0 && events[0]!.id !== next) return Effect.succeed(Option.none())
          const doneId = next + events.length
          const cells = Option.getOrElse(HashMap.get(tables.cells, message.chat_id), () => [])
          const index = cells.findIndex((c) => c.id === cell.id)
          return Effect.as(
            Ref.set(table, {
              ...tables,
              chats: HashMap.set(
                tables.chats,
                message.chat_id,
                new Chat.ChatRecord({ ...chat.value, status: "completed", updated_at: at })
              ),
              messages: HashMap.set(tables.messages, message.chat_id, [...history, message]),
              cells: HashMap.set(
                tables.cells,
                message.chat_id,
                index === -1 ? [...cells, cell] : Arr.replace(cells, index, cell)
              ),
              events: withEvents(tables, message.chat_id, runStart, [...events, { id: doneId, event: done }])
            }),
            Option.some(doneId)
          )
        })),

      appendEvents: ({ chatId, events, organizationId, runStart }) =>
        state.run(
          Effect.flatMap(Ref.get(table), (tables) =>
            canAppend(tables, organizationId, chatId, runStart, events[0].id)
              ? Effect.as(Ref.set(table, { ...tables, events: withEvents(tables, chatId, runStart, events) }), true)
              : Effect.succeed(false))
        ),

      latestRun: (organizationId, chatId) =>
        state.run(
          Effect.map(Ref.get(table), (tables) =>
            Option.isSome(findChat(tables, organizationId, chatId)) ? latestOf(logOf(tables, chatId)) : Option.none())
        ),

      readEvents: (organizationId, chatId, runStart, after) =>
        state.run(Effect.map(Ref.get(table), (tables) =>
          Option.isSome(findChat(tables, organizationId, chatId))
            ? logOf(tables, chatId).filter((logged) => logged.runStart === runStart && logged.event.id > after)
              .map((logged) => logged.event)
            : [])),

      heartbeat: ({ at, chatId, organizationId, runStart }) =>
        state.run(Effect.flatMap(Ref.get(table), (tables) => {
          const chat = findChat(tables, organizationId, chatId)
          const latest = latestOf(logOf(tables, chatId))
          if (
            Option.isNone(chat) || chat.value.status !== "running" ||
            !Option.exists(latest, (l) => l.start === runStart)
          ) return Effect.succeed(false)
          return Effect.as(
            Ref.set(table, {
              ...tables,
              chats: HashMap.set(tables.chats, chatId, new Chat.ChatRecord({ ...chat.value, updated_at: at }))
            }),
            true
          )
        })),

      appendMessage: (message) =>
        withChat(message.organization_id, message.chat_id, (tables) => {
          const all = Array.from(HashMap.values(tables.messages)).flat()
          return all.some((m) => m.id === message.id)
            ? Effect.fail(new Conflict({ message: `message ${message.id} already exists` }))
            : Ref.set(table, {
              ...tables,
              messages: HashMap.modifyAt(tables.messages, message.chat_id, (existing) =>
                Option.some([...Option.getOrElse(existing, () => []), message]))
            })
        }),

      listMessages: (organizationId, chatId) =>
        state.run(Effect.map(Ref.get(table), (tables) =>
          Option.isSome(findChat(tables, organizationId, chatId))
            ? Option.getOrElse(HashMap.get(tables.messages, chatId), () => [])
            : [])),

      upsertCell: (cell) =>
        withChat(cell.organization_id, cell.chat_id, (tables) => {
          const elsewhere = Array.from(HashMap.entries(tables.cells)).some(([chatId, cells]) =>
            chatId !== cell.chat_id && cells.some((c) => c.id === cell.id)
          )
          if (elsewhere) return Effect.fail(new Conflict({ message: `cell ${cell.id} belongs to another chat` }))
          return Ref.set(table, {
            ...tables,
            cells: HashMap.modifyAt(tables.cells, cell.chat_id, (existing) => {
              const cells = Option.getOrElse(existing, (): ReadonlyArray<Chat.CellRecord> => [])
              const index = cells.findIndex((c) => c.id === cell.id)
              return Option.some(index === -1 ? [...cells, cell] : Arr.replace(cells, index, cell))
            })
          })
        }),

      listCells: (organizationId, chatId, page) =>
        state.run(Effect.map(Ref.get(table), (tables) => {
          const cells = Option.isSome(findChat(tables, organizationId, chatId))
            ? Option.getOrElse(HashMap.get(tables.cells, chatId), () => [])
            : []
          // Stable sort of the reversed insertion order: equal timestamps list the later-stored cell first.
          const newestFirst = Arr.sort(
            Arr.reverse(cells),
            Order.reverse(Order.mapInput(DateTime.Order, (cell: Chat.CellRecord) => cell.created_at))
          )
          return {
            cells: newestFirst.slice(page.offset, page.offset + page.limit),
            hasMore: page.offset + page.limit < newestFirst.length
          }
        })),

      getCell: (organizationId, chatId, cellId) =>
        state.run(Effect.map(Ref.get(table), (tables) =>
          findChat(tables, organizationId, chatId).pipe(
            Option.flatMap(() => HashMap.get(tables.cells, chatId)),
            Option.flatMap(Arr.findFirst((cell) => cell.id === cellId))
          ))),

      addAsset: (asset) =>
        withChat(asset.organization_id, asset.chat_id, (tables) =>
          tables.assets.some((a) => a.id === asset.id)
            ? Effect.fail(new Conflict({ message: `asset ${asset.id} already exists` }))
            : Ref.set(table, { ...tables, assets: [...tables.assets, asset] })),

      listAssets: (organizationId, chatId, messageCellIds) =>
        state.run(Effect.map(Ref.get(table), (tables) =>
          Arr.sort(
            tables.assets.filter((a) =>
              a.organization_id === organizationId && a.chat_id === chatId &&
              (messageCellIds === undefined ||
                (a.message_cell_id !== undefined && messageCellIds.includes(a.message_cell_id)))
            ),
            Order.mapInput(DateTime.Order, (asset: AssetRecord) => asset.created_at)
          ))),

      getAsset: (organizationId, id) =>
        state.run(
          Effect.map(Ref.get(table), (tables) =>
            Arr.findFirst(tables.assets, (a) => a.id === id && a.organization_id === organizationId))
        ),

      findAssetForSignedUrl: (id) =>
        state.run(Effect.map(Ref.get(table), (tables) => Arr.findFirst(tables.assets, (a) => a.id === id)))
    }
  })
)
