import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as AgentTrigger from "../src/AgentTrigger.js"

const triggerId = "00000000-0000-4000-8000-000000000001"
const decode = Schema.decodeUnknownEither(AgentTrigger.TriggerRequest)
const errorOf = (input: unknown) => Either.match(decode(input), { onLeft: (e) => e.message, onRight: () => "decoded" })

/** A payload `{"p":"…"}` whose serialization is exactly `bytes` long, padded with `unit`. */
const payloadOf = (bytes: number, unit = "x") => {
  const overhead = JSON.stringify({ p: "" }).length
  const unitBytes = AgentTrigger.serializedSize({ p: unit }) - overhead
  const count = Math.floor((bytes - overhead) / unitBytes)
  const padding = "y".repeat(bytes - overhead - count * unitBytes)
  return { p: unit.repeat(count) + padding }
}

describe("AgentTrigger.TriggerRequest", () => {
  it("takes a trigger id and an optional JSON object payload", () => {
    expect(Either.getOrThrow(decode({ triggerId }))).toEqual({ triggerId })
    const payload = { event: "order.created", items: [{ sku: "A", qty: 2 }] }
    expect(Either.getOrThrow(decode({ triggerId, payload }))).toEqual({ triggerId, payload })
  })

  it("requires the trigger id to be a UUID", () => {
    expect(errorOf({})).toContain("triggerId")
    expect(errorOf({ triggerId: "agent-1" })).not.toBe("decoded")
  })

  it("requires the payload to be a JSON object", () => {
    for (const payload of [[1], "text", 1, null, { n: Number.NaN }]) {
      expect(errorOf({ triggerId, payload })).not.toBe("decoded")
    }
  })

  it("accepts a payload of exactly 16 KB serialized and rejects one byte more", () => {
    const exact = payloadOf(AgentTrigger.MAX_PAYLOAD_BYTES)
    expect(AgentTrigger.serializedSize(exact)).toBe(16 * 1024)
    expect(errorOf({ triggerId, payload: exact })).toBe("decoded")
    const over = payloadOf(AgentTrigger.MAX_PAYLOAD_BYTES + 1)
    expect(AgentTrigger.serializedSize(over)).toBe(16 * 1024 + 1)
    expect(errorOf({ triggerId, payload: over })).toContain(
      "payload is 16385 bytes after JSON serialization; at most 16384 are accepted"
    )
  })

  it("counts UTF-8 bytes of the serialization, not characters", () => {
    const wide = payloadOf(AgentTrigger.MAX_PAYLOAD_BYTES + 2, "€")
    expect(JSON.stringify(wide).length).toBeLessThan(AgentTrigger.MAX_PAYLOAD_BYTES)
    expect(errorOf({ triggerId, payload: wide })).toContain("16386 bytes")
  })

  it("counts the escapes JSON serialization adds", () => {
    // 16 000 characters, but each newline serializes as two bytes (`\n`).
    const escaped = { p: "\n".repeat(8000) }
    expect(AgentTrigger.serializedSize(escaped)).toBe(16_000 + JSON.stringify({ p: "" }).length)
    expect(errorOf({ triggerId, payload: { p: "\n".repeat(8200) } })).toContain("bytes after JSON serialization")
  })
})

describe("AgentTrigger.TriggerResponse", () => {
  it("is always queued", () => {
    expect(Schema.encodeSync(AgentTrigger.TriggerResponse)(AgentTrigger.queued)).toEqual({ status: "queued" })
    expect(Either.isLeft(Schema.decodeUnknownEither(AgentTrigger.TriggerResponse)({ status: "done" }))).toBe(true)
  })
})
