/**
 * The chat channel use cases (`/v2/chat-channels`): admins register and remove the channels that
 * playbooks and agents deliver to; everyone who reads playbooks lists them (to pick one).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as AuditLog from "./AuditLog.js"
import { Auditor } from "./Auditor.js"
import * as ChatChannel from "./ChatChannel.js"
import { ChatChannelRepo } from "./ChatChannelRepo.js"
import * as Decision from "./Decision.js"
import { NotFound, type PermissionDenied, type Unauthenticated } from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { ChatChannelId } from "./Ids.js"
import * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * The chat channel use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class ChatChannels extends Context.Tag("@sightline/core/ChatChannels")<ChatChannels, ChatChannels.Service>() {}

export declare namespace ChatChannels {
  /** The operations; every lookup is scoped to the caller's organization. */
  export interface Service {
    /** `POST /v2/chat-channels` (`organization:write`). */
    readonly create: (
      principal: Policy.Principal,
      request: ChatChannel.CreateRequest
    ) => Effect.Effect<ChatChannel.ChatChannel, Unauthenticated | PermissionDenied>
    /** `GET /v2/chat-channels` (`playbook:read`). */
    readonly list: (
      principal: Policy.Principal
    ) => Effect.Effect<ChatChannel.ListResponse, Unauthenticated | PermissionDenied>
    /** `DELETE /v2/chat-channels/{id}` (`organization:write`); targets naming it then fail saying so. */
    readonly delete: (
      principal: Policy.Principal,
      id: ChatChannelId
    ) => Effect.Effect<ChatChannel.DeleteResponse, Unauthenticated | PermissionDenied | NotFound>
  }
}

/**
 * Builds the use cases over the repository, the audit log and the id generator in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const repo = yield* ChatChannelRepo
  const ids = yield* IdGenerator
  const tx = yield* Transaction
  const auditor = yield* Auditor
  const audit = (principal: Policy.Principal, action: AuditLog.Action, id: string, details: AuditLog.Details) =>
    auditor.recordBy(principal, { action, resourceType: "chat_channel", resourceId: id, details })

  const create = Traced.fn("ChatChannels.create")(
    function*(principal: Policy.Principal, request: ChatChannel.CreateRequest) {
      yield* Decision.enforce(
        Policy.requirePermission(principal, "organization:write")
      )
      return yield* tx.withTransaction(Effect.gen(function*() {
        const record = new ChatChannel.ChatChannelRecord({
          id: ChatChannelId.make(yield* ids.uuid),
          organization_id: principal.organizationId,
          name: request.name,
          webhook_url: request.webhook_url,
          created_by: principal.memberId,
          created_at: yield* DateTime.now
        })
        yield* Effect.orDie(repo.create(record))
        const channel = ChatChannel.toChatChannel(record)
        // The host only: the URL itself is the credential.
        yield* audit(principal, "chat_channel.create", record.id, { name: record.name, host: channel.webhook_host })
        return channel
      }))
    }
  )

  const list = Traced.fn("ChatChannels.list")(function*(principal: Policy.Principal) {
    yield* Decision.enforce(Policy.requirePermission(principal, "playbook:read"))
    return { chat_channels: (yield* repo.list(principal.organizationId)).map(ChatChannel.toChatChannel) }
  })

  const remove = Traced.fn("ChatChannels.delete")(function*(principal: Policy.Principal, id: ChatChannelId) {
    yield* Decision.enforce(
      Policy.requirePermission(principal, "organization:write")
    )
    return yield* tx.withTransaction(Effect.gen(function*() {
      const found = yield* repo.get(principal.organizationId, id)
      if (Option.isNone(found)) return yield* new NotFound()
      yield* repo.delete(principal.organizationId, id)
      yield* audit(principal, "chat_channel.delete", id, { name: found.value.name })
      return { id, success: true }
    }))
  })

  return ChatChannels.of({ create, list, delete: remove })
})

/**
 * The use cases over `ChatChannelRepo`, `Auditor`, `Transaction` and `IdGenerator`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(ChatChannels, make)
