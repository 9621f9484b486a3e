/**
 * Core's `Delivery` with every transport this package has: e-mail over SMTP when configured, and
 * chat channels through their registered webhooks (`ChatChannelRepo`). A target whose transport is
 * not configured fails with a reason that says so; one failing target never stops the others.
 *
 * @since 0.1.0
 */
import { ChatChannelRepo } from "@sightline/core/ChatChannelRepo"
import * as Delivery from "@sightline/core/Delivery"
import { ChatChannelId } from "@sightline/core/Ids"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ChatWebhook from "./ChatWebhook.js"
import * as Smtp from "./Smtp.js"

/**
 * Options of the transports.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** E-mail; every e-mail target fails with `Delivery.unconfiguredReason` when absent. */
  readonly smtp?: Smtp.Options | undefined
  /** Chat-channel webhooks (SSRF rules, retries). */
  readonly webhooks?: ChatWebhook.Options | undefined
}

/**
 * What an e-mail target gets when no SMTP server is configured.
 *
 * @since 0.1.0
 * @category constants
 */
export const noSmtpReason = "e-mail is not configured on this server (SIGHTLINE_SMTP_URL)"

const isChannelId = Schema.is(ChatChannelId)

/**
 * Builds the delivery over the `ChatChannelRepo` in context. Scoped (the SMTP transport closes with it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const channels = yield* ChatChannelRepo
    const send = options.smtp === undefined ? undefined : yield* Smtp.makeSender(options.smtp)
    const webhook = ChatWebhook.make(options.webhooks)

    const deliverOne = (
      request: Delivery.DeliveryRequest,
      target: Delivery.Target
    ): Effect.Effect<Delivery.TargetResult, string> => {
      const invalid = Delivery.rejectInvalid(target)
      if (invalid !== undefined) return Effect.succeed(invalid)
      if (target._tag === "Email") {
        if (send === undefined) return Effect.fail(noSmtpReason)
        return Effect.as(send(request, target.address), Delivery.Delivered.make({ target }))
      }
      return Effect.gen(function*() {
        const channel = isChannelId(target.channelId)
          ? yield* channels.get(request.organizationId, target.channelId)
          : Option.none()
        if (Option.isNone(channel)) {
          return yield* Effect.fail(`no chat channel ${target.channelId} in this organization`)
        }
        yield* webhook.post(
          channel.value.webhook_url,
          ChatWebhook.slackMessage(request.subject, request.text, request.blocks ?? [])
        )
        return Delivery.Delivered.make({ target })
      })
    }

    return Delivery.Delivery.of({
      deliver: (request) =>
        Effect.forEach(
          Delivery.targetsOf(request.targets),
          (target) =>
            deliverOne(request, target).pipe(
              Effect.catchAll((reason) => Effect.succeed(Delivery.Failed.make({ target, reason })))
            ),
          { concurrency: 4 }
        ),
      sendsEmail: send !== undefined
    })
  })

/**
 * The delivery layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Delivery.Delivery, never, ChatChannelRepo> =>
  Layer.scoped(Delivery.Delivery, make(options))
