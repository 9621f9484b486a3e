import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import { ApiKeyId, MemberId } from "../src/Ids.js"
import * as Provenance from "../src/Provenance.js"
import * as Reruns from "../src/Reruns.js"
import * as Usage from "../src/Usage.js"

describe("Provenance.toolCall", () => {
  it("keeps the call's arguments, cut, and the connector they name when it is one", () => {
    expect(Provenance.toolCall({ name: "run_sql", arguments: "{\"connector_id\":3,\"sql\":\"SELECT 1\"}" }, {
      failed: false,
      durationMs: 2.6
    })).toEqual({
      name: "run_sql",
      arguments: "{\"connector_id\":3,\"sql\":\"SELECT 1\"}",
      connector_id: 3,
      failed: false,
      duration_ms: 3
    })
    // Not JSON, not a connector id, too long: kept as far as they go.
    expect(Provenance.toolCall({ name: "x", arguments: "not json" }, { failed: true, durationMs: 0 }).connector_id)
      .toBeUndefined()
    expect(Provenance.toolCall({ name: "x", arguments: "{\"connector_id\":-1}" }, { failed: false, durationMs: 0 }))
      .not.toHaveProperty("connector_id")
    const long = Provenance.toolCall({ name: "x", arguments: "a".repeat(20_000) }, { failed: false, durationMs: 0 })
    expect(long.arguments).toHaveLength(Provenance.maxArgumentsLength)
  })
})

describe("Reruns.sameAnswer", () => {
  it("compares the last tables both ways, or the texts when neither has one", () => {
    const a = { rows: [["EMEA", 10], ["APAC", 5]], text: "x" }
    expect(Reruns.sameAnswer(a, { rows: [["APAC", 5], ["EMEA", 10.001]], text: "y" }, false).passed).toBe(true)
    expect(Reruns.sameAnswer(a, { rows: [["APAC", 5], ["EMEA", 10]], text: "y" }, true).passed).toBe(false)
    // A re-run that adds a row is not the same.
    expect(Reruns.sameAnswer(a, { rows: [...a.rows, ["LATAM", 1]], text: "y" }, false).passed).toBe(false)
    expect(Reruns.sameAnswer(a, { rows: undefined, text: "x" }, false))
      .toEqual({ passed: false, difference: "only the original showed a table" })
    expect(Reruns.sameAnswer({ rows: undefined, text: "No. " }, { rows: undefined, text: "No." }, false).passed)
      .toBe(true)
  })
})

describe("Usage.group", () => {
  const member = MemberId.make(crypto.randomUUID())
  const key = ApiKeyId.make(crypto.randomUUID())
  const period = { from: DateTime.unsafeMake(0), to: DateTime.unsafeMake(1000) }
  const sums: ReadonlyArray<Usage.Sums> = [
    { memberId: member, apiKeyId: key, model: "gpt", answers: 2, calls: 3, input: 150, output: 15 },
    { memberId: member, model: "gpt", answers: 1, calls: 1, input: 10, output: 1 },
    { memberId: member, model: "offline", answers: 4, calls: 8, input: 0, output: 0 }
  ]

  it("adds up per member, key or model, most tokens first, with totals", () => {
    expect(Usage.group(sums, "model", period).rows).toEqual([
      { model: "gpt", answers: 3, calls: 4, input_tokens: 160, output_tokens: 16 },
      { model: "offline", answers: 4, calls: 8, input_tokens: 0, output_tokens: 0 }
    ])
    expect(Usage.group(sums, "api_key", period).rows).toEqual([
      { api_key_id: key, answers: 2, calls: 3, input_tokens: 150, output_tokens: 15 },
      // Sessions' runs have no key.
      { answers: 5, calls: 9, input_tokens: 10, output_tokens: 1 }
    ])
    const byMember = Usage.group(sums, "member", period)
    expect(byMember.rows).toEqual([{ member_id: member, answers: 7, calls: 12, input_tokens: 160, output_tokens: 16 }])
    expect(byMember.totals).toEqual({ answers: 7, calls: 12, input_tokens: 160, output_tokens: 16 })
  })
})
