import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Report from "../src/Report.js"
import * as ReportHtml from "../src/ReportHtml.js"

const decodeDraft = Schema.decodeUnknownEither(Report.ReportDraft)

const draft: Report.ReportDraft = {
  subject: "Weekly <b>revenue</b>",
  summary: "Revenue grew & margins held.",
  blocks: [
    { type: "hero", heading: "Revenue \"up\"", content: "Line one\nline two\n\nSecond paragraph" },
    { type: "image", image_url: "chart:1", image_alt: "Revenue by week" },
    { type: "image", image_url: "https://cdn.example.com/logo.png", image_alt: "Logo", variant: "circular" },
    { type: "list", heading: "Top", items: ["<script>alert(1)</script>", "Desk"] },
    { type: "card", heading: "Inside", blocks: [{ type: "text", content: "Nested <i>text</i>" }] },
    { type: "divider" },
    { type: "spacer", height: 99_999 }
  ]
}

describe("ReportHtml", () => {
  it("escapes every text, keeps paragraphs and line breaks, and clamps spacers", () => {
    const html = ReportHtml.html(draft, { image: (url) => url === "chart:1" ? "cid:chart-1@x" : undefined })
    expect(html).not.toMatch(/<script|<b>|<i>/)
    expect(html).toContain("Weekly &lt;b&gt;revenue&lt;/b&gt;")
    expect(html).toContain("Revenue &quot;up&quot;")
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(html).toContain("Nested &lt;i&gt;text&lt;/i&gt;")
    expect(html).toContain("Line one<br>line two</p>")
    expect(html).toContain("Second paragraph</p>")
    expect(html).toContain("height:2000px")
    // Only inline styles: no style sheets, no scripts.
    expect(html).not.toMatch(/<style|<link|<script/)
  })

  it("shows an image only where the caller resolves it, else its alternative text", () => {
    const html = ReportHtml.html(draft, { image: (url) => url === "chart:1" ? "cid:chart-1@x" : undefined })
    expect(html).toContain(`<img src="cid:chart-1@x" alt="Revenue by week"`)
    expect(html).not.toContain("cdn.example.com")
    expect(html).toContain("[Logo]")
  })

  it("writes a text part with the subject, summary, items and nested blocks", () => {
    const text = ReportHtml.text(draft, { image: () => undefined })
    expect(text.split("\n\n").slice(0, 2)).toEqual(["Weekly <b>revenue</b>", "Revenue grew & margins held."])
    expect(text).toContain("- Desk")
    expect(text).toContain("Nested <i>text</i>")
    expect(text).toContain("[Revenue by week]")
  })
})

describe("Report.ReportDraft", () => {
  it("takes chart references and https images, and refuses other image URLs", () => {
    expect(Either.isRight(decodeDraft(draft))).toBe(true)
    for (const url of ["javascript:alert(1)", "http://tracker.example.com/p.gif", "data:image/png;base64,AAAA"]) {
      const refused = decodeDraft({
        subject: "S",
        summary: "",
        blocks: [{ type: "card", blocks: [{ type: "image", image_url: url }] }]
      })
      expect(Either.isLeft(refused)).toBe(true)
      expect(String(Either.flip(refused).pipe(Either.getOrThrow))).toContain("is neither chart:<n>")
    }
  })

  it("refuses a blank subject, too many blocks and texts past the limit", () => {
    expect(Either.isLeft(decodeDraft({ subject: " ", summary: "", blocks: [] }))).toBe(true)
    const many = Array.from({ length: Report.maxBlocks + 1 }, () => ({ type: "divider" }))
    expect(Either.isLeft(decodeDraft({ subject: "S", summary: "", blocks: many }))).toBe(true)
    const long = "x".repeat(Report.maxTextLength + 1)
    expect(Either.isLeft(decodeDraft({ subject: "S", summary: "", blocks: [{ type: "text", content: long }] }))).toBe(
      true
    )
  })
})
