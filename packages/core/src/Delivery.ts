/**
 * The delivery port: sends a playbook report (or an agent's result) to its targets, e-mail addresses
 * and a chat channel.
 *
 * Delivery is per target: one bad address or an unreachable channel never stops the others, so
 * `deliver` has no error channel and returns one result per distinct target. A transport that cannot
 * be used at all (no SMTP server configured) is a defect of the deployment, not of a delivery.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { OrganizationId } from "./Ids.js"
import { Block, type DeliveryOutcome } from "./Report.js"

/**
 * An e-mail recipient.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EmailTarget = Schema.TaggedStruct("Email", { address: Schema.String })
export type EmailTarget = typeof EmailTarget.Type

/**
 * A chat channel (`chat_channel_id` of a playbook or agent).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatChannelTarget = Schema.TaggedStruct("ChatChannel", { channelId: Schema.String })
export type ChatChannelTarget = typeof ChatChannelTarget.Type

/**
 * Where a delivery goes.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Target = Schema.Union(EmailTarget, ChatChannelTarget)
export type Target = typeof Target.Type

/**
 * The targets as a playbook lists them.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Targets = Schema.Struct({
  emails: Schema.Array(Schema.String),
  chatChannelId: Schema.optional(Schema.String)
})
export type Targets = typeof Targets.Type

/**
 * An image the HTML shows as `cid:<cid>` (a chart rendered to PNG): mail clients drop SVG and scripts.
 *
 * @since 0.1.0
 * @category schemas
 */
export const InlineImage = Schema.Struct({
  cid: Schema.String,
  filename: Schema.String,
  mimeType: Schema.String,
  bytes: Schema.Uint8ArrayFromSelf
})
export type InlineImage = typeof InlineImage.Type

/**
 * What to deliver: the same message, as HTML and as plain text, to every target.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeliveryRequest = Schema.Struct({
  organizationId: OrganizationId,
  subject: Schema.String,
  html: Schema.String,
  text: Schema.String,
  /** The images the HTML refers to by `cid:`; e-mail attaches them inline, a chat channel has no use for them. */
  images: Schema.optional(Schema.Array(InlineImage)),
  /** The report's blocks, for transports that lay out a message themselves (a chat channel). */
  blocks: Schema.optional(Schema.Array(Block)),
  targets: Targets
})
export type DeliveryRequest = typeof DeliveryRequest.Type

/**
 * A target that accepted the message.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Delivered = Schema.TaggedStruct("Delivered", { target: Target })
export type Delivered = typeof Delivered.Type

/**
 * A target that did not, and why (safe to show to the playbook's owner).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Failed = Schema.TaggedStruct("Failed", { target: Target, reason: Schema.String })
export type Failed = typeof Failed.Type

/**
 * The outcome for one target.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TargetResult = Schema.Union(Delivered, Failed)
export type TargetResult = typeof TargetResult.Type

/**
 * Delivers messages.
 *
 * @since 0.1.0
 * @category services
 */
export class Delivery extends Context.Tag("@sightline/core/Delivery")<Delivery, Delivery.Service>() {}

export declare namespace Delivery {
  /** A delivery transport. */
  export interface Service {
    /** Delivers to every distinct target (see `targetsOf`) and returns their results in that order. */
    readonly deliver: (request: DeliveryRequest) => Effect.Effect<ReadonlyArray<TargetResult>>
    /**
     * Whether e-mail is configured: a secret meant for one person (a sign-in link) then goes to
     * their address only, and is not handed to whoever asked for it.
     */
    readonly sendsEmail: boolean
  }
}

/**
 * Delivers with the `Delivery` in context.
 *
 * @since 0.1.0
 * @category utils
 */
export const deliver = (request: DeliveryRequest): Effect.Effect<ReadonlyArray<TargetResult>, never, Delivery> =>
  Effect.flatMap(Delivery, (delivery) => delivery.deliver(request))

/**
 * Whether a string can be used as a recipient: one `@`, no whitespace (which also rules out header
 * injection through CR/LF), no characters that would need quoting. Not a full RFC 5322 parser.
 *
 * @since 0.1.0
 * @category guards
 */
export const isEmailAddress = (address: string): boolean => /^[^\s@<>()[\],;:"\\]+@[^\s@<>()[\],;:"\\]+$/.test(address)

/**
 * The distinct targets of a request, in order: the e-mail addresses (trimmed; repeats compared
 * case-insensitively keep their first spelling), then the chat channel.
 *
 * @since 0.1.0
 * @category utils
 */
export const targetsOf = (targets: Targets): ReadonlyArray<Target> => {
  const emails = Arr.dedupeWith(
    Arr.filter(Arr.map(targets.emails, (address) => address.trim()), (address) => address !== ""),
    (a: string, b: string) => a.toLowerCase() === b.toLowerCase()
  )
  const channel = targets.chatChannelId?.trim()
  return [
    ...Arr.map(emails, (address) => EmailTarget.make({ address })),
    ...(channel === undefined || channel === "" ? [] : [ChatChannelTarget.make({ channelId: channel })])
  ]
}

/**
 * A target's result as a report records it.
 *
 * @since 0.1.0
 * @category utils
 */
export const toOutcome = (result: TargetResult): DeliveryOutcome => ({
  channel: result.target._tag === "Email" ? "email" : "chat_channel",
  target: result.target._tag === "Email" ? result.target.address : result.target.channelId,
  status: result._tag === "Delivered" ? "delivered" : "failed",
  ...(result._tag === "Failed" ? { error: result.reason } : {})
})

/**
 * The result for a target that is not an acceptable address, before any transport is asked.
 *
 * @since 0.1.0
 * @category utils
 */
export const rejectInvalid = (target: Target): TargetResult | undefined =>
  target._tag === "Email" && !isEmailAddress(target.address)
    ? Failed.make({ target, reason: `invalid e-mail address ${JSON.stringify(target.address)}` })
    : undefined

/**
 * One message as the memory transport recorded it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Sent {
  readonly organizationId: OrganizationId
  readonly subject: string
  readonly html: string
  readonly text: string
  readonly target: Target
}

/**
 * What the memory transport delivered, for assertions in tests.
 *
 * @since 0.1.0
 * @category services
 */
export class MemoryDelivery extends Context.Tag("@sightline/core/Delivery/MemoryDelivery")<
  MemoryDelivery,
  MemoryDelivery.Service
>() {}

export declare namespace MemoryDelivery {
  /** The recorded messages. */
  export interface Service {
    /** Every delivered message, one per target, oldest first. */
    readonly sent: Effect.Effect<ReadonlyArray<Sent>>
  }
}

/**
 * Scripted behaviour of the memory transport.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions {
  /** A reason to fail a (valid) target with, to test partial failures; every target succeeds by default. */
  readonly reject?: (target: Target) => string | undefined
  /**
   * Whether it stands for a deployment with e-mail configured, which keeps sign-in links out of
   * answers (default false: tests read the links from the answers).
   */
  readonly sendsEmail?: boolean | undefined
}

/**
 * A transport in memory for unit tests: invalid addresses fail, everything else is recorded as
 * delivered unless `options.reject` gives a reason.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemoryWith = (options: MemoryOptions = {}): Layer.Layer<Delivery | MemoryDelivery> =>
  Layer.effectContext(Effect.map(Ref.make<ReadonlyArray<Sent>>([]), (sent) => {
    const deliverOne = (request: DeliveryRequest, target: Target): Effect.Effect<TargetResult> => {
      const invalid = rejectInvalid(target)
      if (invalid !== undefined) return Effect.succeed(invalid)
      const reason = options.reject?.(target)
      if (reason !== undefined) return Effect.succeed(Failed.make({ target, reason }))
      const { html, organizationId, subject, text } = request
      return Effect.as(
        Ref.update(sent, Arr.append({ organizationId, subject, html, text, target })),
        Delivered.make({ target })
      )
    }
    const delivery = Delivery.of({
      deliver: (request) => Effect.forEach(targetsOf(request.targets), (target) => deliverOne(request, target)),
      sendsEmail: options.sendsEmail ?? false
    })
    return Context.make(Delivery, delivery).pipe(
      Context.add(MemoryDelivery, MemoryDelivery.of({ sent: Ref.get(sent) }))
    )
  }))

/**
 * The memory transport that delivers to every valid target.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<Delivery | MemoryDelivery> = layerMemoryWith()

/**
 * What a deployment without a delivery transport reports for every target.
 *
 * @since 0.1.0
 * @category constants
 */
export const unconfiguredReason = "no delivery transport (SMTP or chat webhook) is configured on this server"

/**
 * The delivery of a deployment that has none: every target fails, saying so, so a report is never
 * shown as delivered when nothing was sent. Unlike `layerMemory`, it records nothing.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerUnconfigured: Layer.Layer<Delivery> = Layer.succeed(
  Delivery,
  Delivery.of({
    deliver: (request) =>
      Effect.succeed(
        targetsOf(request.targets).map((target) => Failed.make({ target, reason: unconfiguredReason }))
      ),
    sendsEmail: false
  })
)
