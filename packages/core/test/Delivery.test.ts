import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import {
  deliver,
  type DeliveryRequest,
  isEmailAddress,
  layerMemory,
  layerMemoryWith,
  MemoryDelivery,
  targetsOf
} from "../src/Delivery.js"
import { OrganizationId } from "../src/Ids.js"
import { deliveryContract } from "../src/testing/DeliveryContract.js"

deliveryContract("layerMemory", layerMemory)

const organizationId = OrganizationId.make("6f9619ff-8b86-4d11-b42d-00c04fc964ff")

const request = (emails: ReadonlyArray<string>, chatChannelId?: string): DeliveryRequest => ({
  organizationId,
  subject: "Report",
  html: "<p>hi</p>",
  text: "hi",
  targets: chatChannelId === undefined ? { emails } : { emails, chatChannelId }
})

describe("Delivery.targetsOf", () => {
  it("trims, drops blanks, dedupes case-insensitively keeping the first spelling, and puts the channel last", () => {
    expect(targetsOf({ emails: [" Ann@Example.com", "bob@example.com", "ann@example.com", ""], chatChannelId: " C1 " }))
      .toEqual([
        { _tag: "Email", address: "Ann@Example.com" },
        { _tag: "Email", address: "bob@example.com" },
        { _tag: "ChatChannel", channelId: "C1" }
      ])
  })
})

describe("Delivery.isEmailAddress", () => {
  it.each(["a@example.com", "first.last+tag@sub.example.org", "root@localhost"])("accepts %s", (address) => {
    expect(isEmailAddress(address)).toBe(true)
  })
  it.each(["", "plain", "a@", "@b", "a@b@c", "a b@c.d", "a@b.c\r\nBcc: x@y", "<a@b.c>", "\"a\"@b.c"])(
    "rejects %j",
    (address) => {
      expect(isEmailAddress(address)).toBe(false)
    }
  )
})

describe("Delivery.layerMemory", () => {
  it.effect("records one message per delivered target and nothing for failed ones", () =>
    Effect.gen(function*() {
      const results = yield* deliver(request(["a@example.com", "bad", "b@example.com"], "C1"))
      expect(results.map((r) => r._tag)).toEqual(["Delivered", "Failed", "Delivered", "Delivered"])
      const sent = yield* Effect.flatMap(MemoryDelivery, (memory) => memory.sent)
      expect(sent.map((s) => s.target)).toEqual([
        { _tag: "Email", address: "a@example.com" },
        { _tag: "Email", address: "b@example.com" },
        { _tag: "ChatChannel", channelId: "C1" }
      ])
      expect(sent[0]).toMatchObject({ organizationId, subject: "Report", html: "<p>hi</p>", text: "hi" })
    }).pipe(Effect.provide(layerMemory)))

  it.effect("fails the targets a script rejects, with its reason", () =>
    Effect.gen(function*() {
      const results = yield* deliver(request(["a@example.com", "b@bounce.example"], "C1"))
      expect(results).toEqual([
        { _tag: "Delivered", target: { _tag: "Email", address: "a@example.com" } },
        { _tag: "Failed", target: { _tag: "Email", address: "b@bounce.example" }, reason: "mailbox unavailable" },
        { _tag: "Failed", target: { _tag: "ChatChannel", channelId: "C1" }, reason: "no chat integration" }
      ])
      expect((yield* Effect.flatMap(MemoryDelivery, (memory) => memory.sent)).length).toBe(1)
    }).pipe(Effect.provide(layerMemoryWith({
      reject: (target) =>
        target._tag === "ChatChannel"
          ? "no chat integration"
          : target.address.endsWith("@bounce.example")
          ? "mailbox unavailable"
          : undefined
    }))))
})
