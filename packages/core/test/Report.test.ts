import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { ChatId, OrganizationId, PlaybookId, ReportId } from "../src/Ids.js"
import * as Report from "../src/Report.js"

const nested = {
  type: "card",
  heading: "Revenue",
  variant: "rounded",
  blocks: [
    { type: "text", content: "Up 4%" },
    { type: "list", items: ["EU", "US"] },
    {
      type: "card",
      blocks: [{ type: "image", image_url: "https://x/a.png", image_alt: "chart", variant: "circular" }]
    },
    { type: "spacer", height: 24 }
  ]
}

describe("Report blocks", () => {
  it("nested blocks decode and encode back unchanged", () => {
    const block = Schema.decodeUnknownSync(Report.Block)(nested)
    expect(block.blocks?.[2]?.blocks?.[0]?.variant).toBe("circular")
    expect(Schema.encodeSync(Report.Block)(block)).toEqual(nested)
  })

  it("an unknown type, variant or a negative height is rejected, also deep inside", () => {
    const decode = Schema.decodeUnknownEither(Report.Block)
    expect(Either.isLeft(decode({ type: "video" }))).toBe(true)
    expect(Either.isLeft(decode({ type: "image", variant: "square" }))).toBe(true)
    expect(Either.isLeft(decode({ type: "spacer", height: -1 }))).toBe(true)
    const deep = decode({ type: "card", blocks: [{ type: "card", blocks: [{ type: "hero", variant: "oval" }] }] })
    expect(Either.isLeft(deep)).toBe(true)
    if (Either.isLeft(deep)) expect(ParseResult.TreeFormatter.formatErrorSync(deep.left)).toContain("oval")
  })

  it("every block type and variant of the spec is accepted", () => {
    for (const type of Report.BlockType.literals) {
      for (const variant of Report.BlockVariant.literals) {
        expect(Either.isRight(Schema.decodeUnknownEither(Report.Block)({ type, variant }))).toBe(true)
      }
    }
  })
})

describe("Report records", () => {
  it("the served report drops the playbook and organization", () => {
    const record = new Report.ReportRecord({
      id: ReportId.make("00000000-0000-4000-8000-000000000001"),
      playbook_id: PlaybookId.make("00000000-0000-4000-8000-000000000002"),
      organization_id: OrganizationId.make("00000000-0000-4000-8000-000000000003"),
      chat_id: ChatId.make("00000000-0000-4000-8000-000000000004"),
      subject: "Weekly",
      summary: "All good",
      blocks: [Schema.decodeUnknownSync(Report.Block)(nested)],
      html_preview: "<p>All good</p>",
      created_at: DateTime.unsafeMake("2026-05-01T07:00:00.000Z")
    })
    const wire = Schema.encodeSync(Report.Report)(Report.toReport(record))
    expect(Object.keys(wire).sort()).toEqual([
      "blocks",
      "chat_id",
      "created_at",
      "deliveries",
      "html_preview",
      "id",
      "subject",
      "summary"
    ])
    expect(wire.blocks).toEqual([nested])
  })
})
