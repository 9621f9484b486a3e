/**
 * The chat channel repository port.
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
import type { ChatChannelRecord } from "./ChatChannel.js"
import { Conflict } from "./Errors.js"
import type { ChatChannelId, OrganizationId } from "./Ids.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores chat channels.
 *
 * @since 0.1.0
 * @category services
 */
export class ChatChannelRepo extends Context.Tag("@sightline/core/ChatChannelRepo")<
  ChatChannelRepo,
  ChatChannelRepo.Service
>() {}

export declare namespace ChatChannelRepo {
  /** Channel storage; ids are unique across organizations. */
  export interface Service {
    /** Stores a new channel; an id that already exists is a `Conflict`. */
    readonly create: (channel: ChatChannelRecord) => Effect.Effect<void, Conflict>
    readonly get: (organizationId: OrganizationId, id: ChatChannelId) => Effect.Effect<Option.Option<ChatChannelRecord>>
    /** The organization's channels, oldest first. */
    readonly list: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<ChatChannelRecord>>
    /** Deletes a channel; false when there was none. */
    readonly delete: (organizationId: OrganizationId, id: ChatChannelId) => Effect.Effect<boolean>
  }
}

const oldestFirst: Order.Order<ChatChannelRecord> = Order.combine(
  Order.mapInput(DateTime.Order, (c: ChatChannelRecord) => c.created_at),
  Order.mapInput(Order.string, (c: ChatChannelRecord) => c.id)
)

/**
 * Channels in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<ChatChannelRepo, never, MemoryState> = Layer.effect(
  ChatChannelRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table(HashMap.empty<ChatChannelId, ChatChannelRecord>())
    const find = (
      rows: HashMap.HashMap<ChatChannelId, ChatChannelRecord>,
      organizationId: OrganizationId,
      id: ChatChannelId
    ) => HashMap.get(rows, id).pipe(Option.filter((row) => row.organization_id === organizationId))
    return ChatChannelRepo.of({
      create: (channel) =>
        state.run(Effect.gen(function*() {
          if (HashMap.has(yield* Ref.get(table), channel.id)) {
            return yield* new Conflict({ message: `a chat channel with id ${channel.id} already exists` })
          }
          yield* Ref.update(table, HashMap.set(channel.id, channel))
        })),
      get: (organizationId, id) => state.run(Effect.map(Ref.get(table), (rows) => find(rows, organizationId, id))),
      list: (organizationId) =>
        state.run(
          Effect.map(Ref.get(table), (rows) =>
            Arr.sort(
              Arr.filter(Arr.fromIterable(HashMap.values(rows)), (c) => c.organization_id === organizationId),
              oldestFirst
            ))
        ),
      delete: (organizationId, id) =>
        state.run(Effect.gen(function*() {
          if (Option.isNone(find(yield* Ref.get(table), organizationId, id))) return false
          yield* Ref.update(table, HashMap.remove(id))
          return true
        }))
    })
  })
)
