/**
 * The chats use cases: the read side of `/v2/chats` (list, get, cells, one cell) and `cancel`. The
 * writes of a run (start it, append its cells and answer, end it) are `ChatRuns`.
 *
 * Visibility: a chat is visible to its creator only, org admins included (a conversation is
 * personal, and roles never replace ownership in the policy engine), and only in the audience it
 * was made in (the end user behind a key with client attributes, see `Audience`). Everyone else gets
 * `NotFound`, exactly as for a chat that does not exist.
 *
 * `cancel` ends the running run in the store, with its `done` in the log: the run's process may be
 * another one, and it learns of the end by its next write failing with `Conflict` (see `ChatRuns`).
 *
 * Asset URLs are signed per fetch by the http package: the reads take a `SignAssetUrl` function
 * and return the finished wire shapes, so the storage key never leaves core.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Asset from "./Asset.js"
import { AssetStore, type StoredObject } from "./AssetStore.js"
import * as Audience from "./Audience.js"
import * as Chat from "./Chat.js"
import * as ChatEvent from "./ChatEvent.js"
import { ChatRepo } from "./ChatRepo.js"
import { enforce } from "./Decision.js"
import * as EndUser from "./EndUser.js"
import type { NotFound, PermissionDenied, Unauthenticated } from "./Errors.js"
import * as Errors from "./Errors.js"
import type { AssetId, CellId, ChatId } from "./Ids.js"
import * as RunLog from "./internal/chatRunLog.js"
import { MemberRepo } from "./MemberRepo.js"
import * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"
import * as TrustedSchema from "./TrustedSchema.js"

/**
 * Signs the URL of a stored asset (`GET /v2/assets/{id}?expires=…&signature=…`); given by the http package.
 *
 * @since 0.1.0
 * @category models
 */
export type SignAssetUrl = (assetId: AssetId) => Effect.Effect<string>

/**
 * An asset with its stored bytes (`bytes` is absent for inline assets, which carry `content`).
 *
 * @since 0.1.0
 * @category models
 */
export interface SignedAsset {
  readonly record: Asset.AssetRecord
  readonly bytes?: StoredObject | undefined
}

/**
 * Options of the chats service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * A `running` chat without a write for this long is treated as failed (its process died). A run
   * writes a heartbeat every `Answers.Options.heartbeatMillis`, which must stay well below this.
   */
  readonly staleRunAfter: Duration.DurationInput
}

/**
 * The default options: a run is stale after a minute without a write (twelve missed heartbeats).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions: Options = { staleRunAfter: Duration.minutes(1) }

/**
 * The chats use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Chats extends Context.Tag("@sightline/core/Chats")<Chats, Chats.Service>() {}

export declare namespace Chats {
  /** The chat operations. The caller comes first; a chat of anyone else is `NotFound`. */
  export interface Service {
    /** `GET /v2/chats` (`chat:read`): the caller's chats, filtered, sorted and paged. */
    readonly list: (
      principal: Policy.Principal,
      query: Chat.ListChatsQuery
    ) => Effect.Effect<Chat.ListChatsResponse, Unauthenticated | PermissionDenied>
    /**
     * `DELETE /v2/embed/users/{external_user_id}/chats` (`chat:write`, not an end user): deletes the
     * chats the caller's end user made, with their assets, and answers how many there were.
     */
    readonly forgetEndUser: (
      principal: Policy.Principal,
      externalUserId: string
    ) => Effect.Effect<{ readonly deleted: number }, Unauthenticated | PermissionDenied>
    /**
     * `GET /v2/chats/{id}` (`chat:read`): the chat, its messages (each assistant message with the
     * assets produced for it) and every asset of the chat, with `message_cell_id`.
     */
    readonly get: (
      principal: Policy.Principal,
      id: ChatId,
      sign: SignAssetUrl
    ) => Effect.Effect<Chat.GetChatResponse, Unauthenticated | PermissionDenied | NotFound>
    /** `GET /v2/chats/{id}/cells` (`chat:read`): a page of cells, newest first, each with its assets. */
    readonly cells: (
      principal: Policy.Principal,
      id: ChatId,
      query: Chat.ChatCellsQuery,
      sign: SignAssetUrl
    ) => Effect.Effect<Chat.ChatCellsResponse, Unauthenticated | PermissionDenied | NotFound>
    /** `GET /v2/chats/{id}/cells/{cellId}` (`chat:read`): one cell with its assets. */
    readonly cell: (
      principal: Policy.Principal,
      id: ChatId,
      cellId: CellId,
      sign: SignAssetUrl
    ) => Effect.Effect<Chat.ChatCell, Unauthenticated | PermissionDenied | NotFound>
    /**
     * `POST /v2/chats/{id}/cancel` (`chat:write`): ends the running run as `cancelled`;
     * `{cancelled: false}` when nothing was running (cancelling twice is not an error).
     */
    readonly cancel: (
      principal: Policy.Principal,
      id: ChatId
    ) => Effect.Effect<Chat.CancelChatResponse, Unauthenticated | PermissionDenied | NotFound>
    /**
     * The asset a signed URL names, in whichever organization it lives (`NotFound` when none). There
     * is no caller: only for serving `GET /v2/assets/{id}` once the URL's signature is verified, which
     * proves the holder was handed the URL by someone who could read the chat.
     */
    readonly assetForSignedUrl: (id: AssetId) => Effect.Effect<SignedAsset, NotFound>

    /** The chat, for a caller who may read it (`chat:read`); `NotFound` as for `get`. */
    readonly visible: (
      principal: Policy.Principal,
      id: ChatId
    ) => Effect.Effect<Chat.ChatRecord, Unauthenticated | PermissionDenied | NotFound>
  }
}

// -----------------------------------------------------------------------------------------------
// Rules
// -----------------------------------------------------------------------------------------------

/**
 * Whose chats a listing returns: the caller's own, or those of one of its end users when it names
 * one (the host's backend, acting as the member its sessions act as, with the client attributes of
 * the key that minted them). An end user's session never names another's: it always lists its own.
 */
const listedAudience = (principal: Policy.Principal, externalUserId: string | undefined): string =>
  externalUserId === undefined || Policy.endUserOf(principal) !== undefined
    ? Policy.audienceOf(principal)
    : hostedAudience(principal, externalUserId)

/** The audience of the caller's end user of this id: the sessions its key (or one of the same attributes) mints. */
const hostedAudience = (principal: Policy.Principal, externalUserId: string): string =>
  EndUser.audienceOf(principal.organizationId, Policy.clientAttributesJson(principal), externalUserId)

/**
 * Who may reach a chat: its creator only, in its audience (no grants, no org-wide visibility).
 *
 * @since 0.1.0
 * @category utils
 */
export const accessOf = (chat: Chat.ChatRecord): Policy.ObjectAccess => ({
  organizationId: chat.organization_id,
  ownerId: chat.creator_id,
  audience: chat.audience ?? Audience.none,
  isPublic: false,
  grants: []
})

/**
 * Is the chat `running` without a write for `staleRunAfter` (its run's process is presumed dead)?
 *
 * @since 0.1.0
 * @category guards
 */
export const isStale = (chat: Chat.ChatRecord, now: DateTime.Utc, staleRunAfter: Duration.DurationInput): boolean =>
  chat.status === "running" && DateTime.lessThanOrEqualTo(DateTime.addDuration(chat.updated_at, staleRunAfter), now)

// -----------------------------------------------------------------------------------------------
// The service
// -----------------------------------------------------------------------------------------------

/**
 * Builds the chats use cases with the given options over the ports in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (options: Options) =>
  Effect.gen(function*() {
    const chats = yield* ChatRepo
    const members = yield* MemberRepo
    const tx = yield* Transaction
    const assetStore = yield* AssetStore
    const staleRunAfter = options.staleRunAfter

    // The chat if the caller may see it (`chat:read`), else `NotFound`/`PermissionDenied`.
    const readable = (principal: Policy.Principal, id: ChatId) =>
      Effect.gen(function*() {
        const chat = yield* chats.get(principal.organizationId, id)
        if (Option.isNone(chat)) return yield* new Errors.NotFound()
        yield* enforce(
          Policy.canRead(principal, "chat", accessOf(chat.value), yield* DateTime.now)
        )
        return chat.value
      })

    const render = (asset: Asset.AssetRecord, sign: SignAssetUrl, withMessageCellId: boolean) =>
      asset.storage_key === undefined
        ? Effect.succeed(Asset.toAsset(asset, { withMessageCellId }))
        : Effect.map(sign(asset.id), (url) => Asset.toAsset(asset, { url, withMessageCellId }))

    // Cells with the assets they produced (cells never carry `message_cell_id`: Get Chat only).
    const renderCells = (
      cells: ReadonlyArray<Chat.CellRecord>,
      assets: ReadonlyArray<Asset.AssetRecord>,
      sign: SignAssetUrl
    ) =>
      Effect.forEach(cells, (cell) =>
        Effect.map(
          Effect.forEach(assets.filter((asset) => asset.cell_id === cell.id), (asset) => render(asset, sign, false)),
          (rendered) => Chat.toChatCell(cell, rendered)
        ))

    const list = Traced.fn("Chats.list")(function*(principal: Policy.Principal, query: Chat.ListChatsQuery) {
      yield* enforce(Policy.requirePermission(principal, "chat:read"))
      const page = yield* chats.list(principal.organizationId, {
        limit: query.limit,
        offset: query.offset,
        searchTerm: query.search_term,
        sortBy: query.sort_by,
        sortDirection: query.sort_direction,
        creatorId: principal.memberId,
        audience: listedAudience(principal, query.external_user_id)
      })
      // Only the caller's own chats are listed, so every creator e-mail is the caller's (which
      // authentication already read, saving a statement on every listing).
      const creatorEmail = principal.email ?? Option.match(
        yield* members.get(principal.organizationId, principal.memberId),
        { onNone: () => "", onSome: (member) => member.email }
      )
      const now = yield* DateTime.now
      return {
        chats: page.rows.map(({ chat, preview }) => {
          const summary = Chat.toSummary(chat, { preview, creatorEmail })
          return isStale(chat, now, staleRunAfter)
            ? TrustedSchema.make(Chat.ChatSummary, { ...summary, is_running: false })
            : summary
        }),
        total_count: page.totalCount
      }
    })

    const get = Traced.fn("Chats.get")(function*(principal: Policy.Principal, id: ChatId, sign: SignAssetUrl) {
      const chat = yield* readable(principal, id)
      const [messages, assets] = yield* Effect.all([
        chats.listMessages(principal.organizationId, id),
        chats.listAssets(principal.organizationId, id)
      ])
      const rendered = yield* Effect.forEach(assets, (asset) => render(asset, sign, true))
      return {
        chat: Chat.toChat(chat),
        messages: messages.map((message) =>
          Chat.toChatMessage(message, rendered.filter((asset) => asset.message_cell_id === message.cell_id))
        ),
        assets: rendered
      }
    })

    const cells = Traced.fn("Chats.cells")(
      function*(principal: Policy.Principal, id: ChatId, query: Chat.ChatCellsQuery, sign: SignAssetUrl) {
        yield* readable(principal, id)
        // The query schema already falls back; in-process callers get the same rule.
        const limit = Number.isInteger(query.limit) && query.limit >= 1 && query.limit <= Chat.maxCellsLimit
          ? query.limit
          : Chat.defaultCellsLimit
        const [page, assets] = yield* Effect.all([
          chats.listCells(principal.organizationId, id, { limit, offset: query.offset }),
          chats.listAssets(principal.organizationId, id)
        ])
        return { chat_id: id, cells: yield* renderCells(page.cells, assets, sign), has_more: page.hasMore }
      }
    )

    const cell = Traced.fn("Chats.cell")(
      function*(principal: Policy.Principal, id: ChatId, cellId: CellId, sign: SignAssetUrl) {
        yield* readable(principal, id)
        const found = yield* chats.getCell(principal.organizationId, id, cellId)
        if (Option.isNone(found)) return yield* new Errors.NotFound()
        const assets = yield* chats.listAssets(principal.organizationId, id)
        const [rendered] = yield* renderCells([found.value], assets, sign)
        return rendered!
      }
    )

    const cancel = Traced.fn("Chats.cancel")(function*(principal: Policy.Principal, id: ChatId) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const now = yield* DateTime.now
        const chat = yield* chats.getForUpdate(principal.organizationId, id)
        if (Option.isNone(chat)) return yield* new Errors.NotFound()
        yield* enforce(
          Policy.canWrite(principal, "chat", accessOf(chat.value), now)
        )
        if (chat.value.status !== "running") return { cancelled: false }
        // The `done` goes into the log here, with the end: the run's process may be gone.
        yield* RunLog.logEnd(chats, chat.value, { type: "done", status: "failed", error: ChatEvent.cancelledMessage })
        const cancelled = yield* Effect.orDie(Chat.finishRun(chat.value, "cancelled", now))
        yield* Effect.orDie(chats.update(cancelled))
        return { cancelled: true }
      }))
    })

    const assetForSignedUrl = Traced.fn("Chats.assetForSignedUrl")(function*(id: AssetId) {
      const asset = yield* chats.findAssetForSignedUrl(id)
      if (Option.isNone(asset)) return yield* new Errors.NotFound()
      const key = asset.value.storage_key
      if (key === undefined) return { record: asset.value }
      // A record whose bytes are gone (a crash between the two writes) is as absent as no record.
      const bytes = yield* assetStore.get(key)
      if (Option.isNone(bytes)) return yield* new Errors.NotFound()
      return { record: asset.value, bytes: bytes.value }
    })

    const visible = (principal: Policy.Principal, id: ChatId) => readable(principal, id)

    const forgetEndUser = Traced.fn("Chats.forgetEndUser")(
      function*(principal: Policy.Principal, externalUserId: string) {
        // The host forgets its end users; an end user's session manages nothing, itself included.
        if (Policy.endUserOf(principal) !== undefined) {
          return yield* new Errors.PermissionDenied({
            message: "permission denied: an end user's session cannot do this"
          })
        }
        yield* enforce(Policy.requirePermission(principal, "chat:write"))
        const ids = yield* chats.deleteMany(principal.organizationId, {
          creatorId: principal.memberId,
          audience: hostedAudience(principal, externalUserId)
        })
        // The rows are gone first: an object left behind by a crash here is unreachable, never shown.
        yield* Effect.forEach(ids, (id) => assetStore.deletePrefix(`${principal.organizationId}/chats/${id}/`), {
          discard: true
        })
        return { deleted: ids.length }
      }
    )

    return Chats.of({
      list,
      get,
      cells,
      cell,
      cancel,
      assetForSignedUrl,
      visible,
      forgetEndUser
    })
  })

/**
 * Builds the chats use cases with the default options.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = makeWith(defaultOptions)

/**
 * The chats use cases over the repositories, `Transaction` and the asset store in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  Chats,
  never,
  ChatRepo | MemberRepo | Transaction | AssetStore
> = Layer.effect(Chats, make)

/**
 * `layer` with other options (a shorter stale limit in tests, a longer one for slow warehouses).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (
  options: Options
): Layer.Layer<
  Chats,
  never,
  ChatRepo | MemberRepo | Transaction | AssetStore
> => Layer.effect(Chats, makeWith(options))
