/**
 * An assistant message of a chat as feedback and re-runs read it: the message, the question it
 * answered, and its last table with that table's cell (its SQL and connector).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ChatRepo } from "../ChatRepo.js"
import { NotFound } from "../Errors.js"
import type { ChatId, MessageId, OrganizationId } from "../Ids.js"

/** The answer `messageId` of a chat, or `NotFound` when it is no assistant message of it. */
export const chatAnswer = (
  chats: ChatRepo.Service,
  organizationId: OrganizationId,
  chatId: ChatId,
  messageId: MessageId
) =>
  Effect.gen(function*() {
    const messages = yield* chats.listMessages(organizationId, chatId)
    const at = messages.findIndex((m) => m.id === messageId && m.role === "assistant")
    if (at < 0) return yield* new NotFound({ message: `no assistant message ${messageId} in chat ${chatId}` })
    const message = messages[at]!
    const question = messages.slice(0, at).reverse().find((m) => m.role === "user")?.content ?? ""
    const table = (yield* chats.listAssets(organizationId, chatId))
      .filter((asset) => asset.message_cell_id === message.cell_id && asset.type === "table").at(-1)
    const cell = table === undefined ? Option.none() : yield* chats.getCell(organizationId, chatId, table.cell_id)
    return { message, question, table, cell }
  })
