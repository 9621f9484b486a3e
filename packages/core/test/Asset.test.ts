import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Asset from "../src/Asset.js"
import { AssetId, CellId, ChatId, OrganizationId } from "../src/Ids.js"

const at = DateTime.unsafeMake("2026-03-01T12:00:00.000Z")
const ids = {
  id: AssetId.make("00000000-0000-4000-8000-000000000001"),
  organization_id: OrganizationId.make("00000000-0000-4000-8000-000000000002"),
  chat_id: ChatId.make("00000000-0000-4000-8000-000000000003"),
  cell_id: CellId.make("00000000-0000-4000-8000-000000000004"),
  message_cell_id: CellId.make("00000000-0000-4000-8000-000000000005")
}

const stored = new Asset.AssetRecord({
  ...ids,
  name: "revenue.png",
  type: "chart",
  mime_type: "image/png",
  storage_key: Asset.storageKey(ids),
  size_bytes: 2048,
  created_at: at
})

const inline = new Asset.AssetRecord({
  ...ids,
  name: "notes.txt",
  type: "text",
  mime_type: "text/plain",
  content: "hello",
  created_at: at
})

describe("Asset", () => {
  it("a stored asset is served with the signed URL and never its storage key", () => {
    const wire = Schema.encodeSync(Asset.Asset)(Asset.toAsset(stored, { url: "https://x/v2/assets/1?sig=abc" }))
    expect(wire).toEqual({
      name: "revenue.png",
      type: "chart",
      url: "https://x/v2/assets/1?sig=abc",
      cell_id: ids.cell_id,
      created_at: "2026-03-01T12:00:00.000Z"
    })
    expect(JSON.stringify(wire)).not.toContain(stored.storage_key)
  })

  it("an inline text asset carries its content and no URL, even if one is offered", () => {
    const asset = Asset.toAsset(inline, { url: "https://ignored" })
    expect(asset.content).toBe("hello")
    expect(asset.url).toBeUndefined()
    expect("url" in asset).toBe(false)
  })

  it("message_cell_id appears only when rendering for Get Chat", () => {
    expect("message_cell_id" in Asset.toAsset(stored)).toBe(false)
    expect(Asset.toAsset(stored, { withMessageCellId: true }).message_cell_id).toBe(ids.message_cell_id)
  })

  it("a stored asset has exactly one of storage_key and content", () => {
    const { content: _content, ...base } = inline
    const decode = Schema.decodeUnknownEither(Asset.AssetRecord)
    const encoded = Schema.encodeSync(Asset.AssetRecord)(inline)
    expect(Either.isRight(decode(encoded))).toBe(true)
    expect(Either.isLeft(decode({ ...encoded, storage_key: "k" }))).toBe(true)
    const { content: _c, ...neither } = encoded
    expect(Either.isLeft(decode(neither))).toBe(true)
    expect(() => new Asset.AssetRecord({ ...base, content: "x", storage_key: "k" })).toThrow(/exactly one/)
  })

  it("only the seed's asset kinds decode", () => {
    const decode = Schema.decodeUnknownEither(Asset.AssetType)
    for (const kind of ["chart", "image", "table", "pdf", "html", "text", "download"]) {
      expect(Either.isRight(decode(kind))).toBe(true)
    }
    expect(Either.isLeft(decode("video"))).toBe(true)
  })

  it("storage keys are scoped by organization and chat", () => {
    expect(Asset.storageKey(ids)).toBe(`${ids.organization_id}/chats/${ids.chat_id}/assets/${ids.id}`)
  })
})
