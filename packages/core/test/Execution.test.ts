import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Execution from "../src/Execution.js"
import { ExecutionId, OrganizationId, SandboxId } from "../src/Ids.js"

// Tests may use the platform's encoder as the reference that previews are measured against.
const encoder = new (globalThis as unknown as { TextEncoder: new() => { encode(s: string): Uint8Array } })
  .TextEncoder()
const utf8 = (s: string) => encoder.encode(s).length

const { PREVIEW_MAX_BYTES: MAX, TRUNCATION_MARKER: MARKER } = Execution

describe("Execution.preview", () => {
  it("keeps an output that fits, up to exactly 16 KB", () => {
    expect(Execution.preview("")).toBe("")
    expect(Execution.preview("hello\n")).toBe("hello\n")
    const exact = "x".repeat(MAX)
    expect(Execution.preview(exact)).toBe(exact)
  })

  it("cuts one byte over the limit to exactly 16 KB ending with the marker", () => {
    const cut = Execution.preview("x".repeat(MAX + 1))
    expect(cut.endsWith(MARKER)).toBe(true)
    expect(utf8(cut)).toBe(MAX)
    expect(cut).toBe("x".repeat(MAX - utf8(MARKER)) + MARKER)
  })

  it("measures bytes, not characters: multi-byte output is cut although it has fewer than 16K characters", () => {
    const output = "é".repeat(9000) // 9000 characters, 18000 bytes
    const cut = Execution.preview(output)
    expect(cut.endsWith(MARKER)).toBe(true)
    expect(utf8(cut)).toBeLessThanOrEqual(MAX)
    expect(cut.slice(0, -MARKER.length)).toBe("é".repeat(Math.floor((MAX - utf8(MARKER)) / 2)))
  })

  it("never splits a surrogate pair", () => {
    const output = "a" + "😀".repeat(5000)
    const kept = Execution.preview(output).slice(0, -MARKER.length)
    expect(kept).toBe("a" + "😀".repeat(Math.floor((MAX - utf8(MARKER) - 1) / 4)))
    expect(/[\uD800-\uDBFF]$/.test(kept)).toBe(false)
  })

  it.prop(
    "is the output itself when it fits, else its longest fitting prefix plus the marker",
    [FastCheck.string({ unit: "binary", minLength: 0, maxLength: 7000 }), FastCheck.integer({ min: 1, max: 4 })],
    ([chunk, times]) => {
      const output = chunk.repeat(times)
      const result = Execution.preview(output)
      expect(utf8(result)).toBeLessThanOrEqual(MAX)
      if (utf8(output) <= MAX) {
        expect(result).toBe(output)
      } else {
        expect(result.endsWith(MARKER)).toBe(true)
        const kept = result.slice(0, -MARKER.length)
        expect(output.startsWith(kept)).toBe(true)
        const nextCodePoint = String.fromCodePoint(output.codePointAt(kept.length)!)
        expect(utf8(kept) + utf8(nextCodePoint) + utf8(MARKER)).toBeGreaterThan(MAX)
      }
    }
  )
})

describe("Execution retention", () => {
  it("keeps records for 30 days", () => {
    expect(Duration.toMillis(Execution.RETENTION)).toBe(30 * 24 * 60 * 60 * 1000)
    const now = DateTime.unsafeMake("2026-03-31T12:00:00.000Z")
    expect(DateTime.formatIso(Execution.retentionCutoff(now))).toBe("2026-03-01T12:00:00.000Z")
  })
})

describe("Execution schemas", () => {
  const stored = new Execution.Execution({
    id: ExecutionId.make("exec-1"),
    organization_id: OrganizationId.make("00000000-0000-4000-8000-000000000001"),
    sandbox_id: SandboxId.make("00000000-0000-4000-8000-000000000002"),
    kind: "query",
    source: "playbook",
    input: "finance/revenue.sql",
    output_preview: "3 rows",
    duration_ms: 40,
    created_at: DateTime.unsafeMake("2026-03-01T10:00:00.000Z")
  })

  it("the listed view leaves the organization and sandbox out", () => {
    expect(Schema.encodeSync(Execution.View)(stored)).toEqual({
      id: "exec-1",
      kind: "query",
      source: "playbook",
      input: "finance/revenue.sql",
      output_preview: "3 rows",
      duration_ms: 40,
      created_at: "2026-03-01T10:00:00.000Z"
    })
  })

  it("kind and source take only the documented values", () => {
    const encoded = Schema.encodeSync(Execution.View)(stored)
    expect(Either.isLeft(Schema.decodeUnknownEither(Execution.View)({ ...encoded, kind: "ruby" }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(Execution.View)({ ...encoded, source: "cron" }))).toBe(true)
    for (const kind of ["python", "bash", "sql", "query"]) {
      expect(Either.isRight(Schema.decodeUnknownEither(Execution.View)({ ...encoded, kind }))).toBe(true)
    }
  })

  it("list params default the limit to 50 and bound it to 1..200", () => {
    expect(Schema.decodeUnknownSync(Execution.ListParams)({})).toEqual({ limit: 50 })
    expect(Schema.decodeUnknownSync(Execution.ListParams)({ limit: "1", cursor: "abc" })).toEqual({
      limit: 1,
      cursor: "abc"
    })
    for (const limit of ["0", "201", "-3", "ten"]) {
      expect(Either.isLeft(Schema.decodeUnknownEither(Execution.ListParams)({ limit }))).toBe(true)
    }
  })

  it("the list response omits next_cursor on the last page", () => {
    expect(Schema.encodeSync(Execution.ListResponse)({ executions: [] })).toEqual({ executions: [] })
  })
})
