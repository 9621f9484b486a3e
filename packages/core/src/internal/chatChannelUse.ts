/**
 * The one rule of "may a playbook or an agent deliver to this chat channel": it must be a channel
 * of the caller's organization, checked when it is set (as e-mail addresses are) and again before
 * a run, so a foreign or made-up id never waits to fail at delivery.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ChatChannelRepo } from "../ChatChannelRepo.js"
import { InvalidRequest } from "../Errors.js"
import { ChatChannelId, type OrganizationId } from "../Ids.js"

const isChannelId = Schema.is(ChatChannelId)

/** Why `channel` cannot be delivered to, or `undefined` when it is one of the organization's. */
export const problem = (
  repo: ChatChannelRepo.Service,
  organizationId: OrganizationId,
  channel: string
): Effect.Effect<string | undefined> =>
  Effect.map(
    isChannelId(channel) ? repo.get(organizationId, channel) : Effect.succeed(Option.none()),
    (found) =>
      Option.isSome(found)
        ? undefined
        : `chat_channel_id: no chat channel ${JSON.stringify(channel)} in this organization`
  )

/** Fails with `InvalidRequest` unless `channel` (when set) is one of the organization's channels. */
export const require = (
  repo: ChatChannelRepo.Service,
  organizationId: OrganizationId,
  channel: string | undefined
): Effect.Effect<void, InvalidRequest> =>
  channel === undefined
    ? Effect.void
    : Effect.flatMap(
      problem(repo, organizationId, channel),
      (message) => message === undefined ? Effect.void : Effect.fail(new InvalidRequest({ message }))
    )
