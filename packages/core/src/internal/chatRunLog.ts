/**
 * The end of a chat's run in its event log, written by whichever write ends the run: a run
 * finishing, a cancel, or the end of a stale run.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Chat from "../Chat.js"
import type * as ChatEvent from "../ChatEvent.js"
import type { ChatRepo } from "../ChatRepo.js"

/**
 * Logs the end of the chat's latest run under the next id, while the chat (locked by the caller)
 * is still `running`: the writes that end a run write its `done` with them, so a follower never
 * waits on a run that is over. A chat without a log (older than the log) has nothing to end.
 */
export const logEnd = (chats: ChatRepo.Service, chat: Chat.ChatRecord, done: ChatEvent.Done) =>
  Effect.gen(function*() {
    const latest = yield* chats.latestRun(chat.organization_id, chat.id)
    if (Option.isNone(latest)) return 0
    const id = latest.value.last + 1
    const logged = yield* chats.appendEvents({
      organizationId: chat.organization_id,
      chatId: chat.id,
      runStart: latest.value.start,
      events: [{ id, event: done }]
    })
    if (!logged) return yield* Effect.dieMessage(`chat ${chat.id}: the log refused the end of its run`)
    return id
  })
