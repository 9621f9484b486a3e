/**
 * The contract every `Delivery` transport satisfies: one result per distinct target, in order, and a
 * bad target failing alone. Addresses are at `example.com` with random local parts: point an SMTP
 * adapter at a test sink.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { Delivery, type DeliveryRequest, type Targets } from "../Delivery.js"
import { OrganizationId } from "../Ids.js"
import { uuid } from "./Fixtures.js"

const address = () => `contract-${uuid()}@example.com`

const request = (targets: Targets): DeliveryRequest => ({
  organizationId: OrganizationId.make(uuid()),
  subject: "Weekly revenue",
  html: "<h1>Revenue</h1><p>Up 4%.</p>",
  text: "Revenue\n\nUp 4%.",
  targets
})

/**
 * Registers the `Delivery` contract suite for a transport.
 *
 * @since 0.1.0
 * @category utils
 */
export const deliveryContract = (name: string, layer: Layer.Layer<Delivery, unknown>): void => {
  describe(`Delivery contract: ${name}`, () => {
    it.live("delivers to every e-mail address once, in order", () =>
      Effect.gen(function*() {
        const delivery = yield* Delivery
        const [a, b] = [address(), address()]
        const results = yield* delivery.deliver(request({ emails: [a, b, b.toUpperCase(), ` ${a} `] }))
        expect(results).toEqual([
          { _tag: "Delivered", target: { _tag: "Email", address: a } },
          { _tag: "Delivered", target: { _tag: "Email", address: b } }
        ])
      }).pipe(Effect.provide(layer)))

    it.live("fails an invalid address alone, with a reason", () =>
      Effect.gen(function*() {
        const delivery = yield* Delivery
        const good = address()
        const results = yield* delivery.deliver(request({ emails: ["not an address", good, "x@y\r\nBcc: z@w"] }))
        expect(results.map((r) => r._tag)).toEqual(["Failed", "Delivered", "Failed"])
        for (const result of results) {
          if (result._tag === "Failed") expect(result.reason.length).toBeGreaterThan(0)
        }
        expect(results[1]!.target).toEqual({ _tag: "Email", address: good })
      }).pipe(Effect.provide(layer)))

    it.live("answers for the chat channel after the e-mails, delivered or failed with a reason", () =>
      Effect.gen(function*() {
        const delivery = yield* Delivery
        const channelId = `contract-${uuid()}`
        const results = yield* delivery.deliver(request({ emails: [address()], chatChannelId: channelId }))
        expect(results).toHaveLength(2)
        const channel = results[1]!
        expect(channel.target).toEqual({ _tag: "ChatChannel", channelId })
        if (channel._tag === "Failed") expect(channel.reason.length).toBeGreaterThan(0)
      }).pipe(Effect.provide(layer)))

    it.live("does nothing without targets", () =>
      Effect.gen(function*() {
        const delivery = yield* Delivery
        expect(yield* delivery.deliver(request({ emails: [] }))).toEqual([])
        expect(yield* delivery.deliver(request({ emails: ["  "], chatChannelId: "" }))).toEqual([])
      }).pipe(Effect.provide(layer)))
  })
}
