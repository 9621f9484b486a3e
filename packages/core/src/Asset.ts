/**
 * Generated assets (charts, images, tables, files) and how they are stored.
 *
 * A stored asset never carries a URL: its bytes live in a blob store under `storage_key`, and the
 * http package signs a fresh URL on every fetch. Small text assets are kept inline in `content`
 * and are served without a URL, as the seed describes.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AssetId, CellId, ChatId, OrganizationId } from "./Ids.js"
import * as TrustedSchema from "./TrustedSchema.js"

/**
 * The kinds of asset the seed names.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssetType = Schema.Literal("chart", "image", "table", "pdf", "html", "text", "download")
export type AssetType = typeof AssetType.Type

/**
 * An asset as served (seed fields; `url` is signed per fetch, `message_cell_id` only on Get Chat).
 *
 * @since 0.1.0
 * @category models
 */
export class Asset extends Schema.Class<Asset>("@sightline/core/Asset")({
  name: Schema.String,
  type: AssetType,
  url: Schema.optional(Schema.String),
  content: Schema.optional(Schema.String),
  cell_id: CellId,
  message_cell_id: Schema.optional(CellId),
  created_at: Schema.DateTimeUtc
}) {}

/**
 * An asset as stored. Exactly one of `storage_key` (bytes in the blob store, served through a
 * signed URL) and `content` (inline text) is set.
 *
 * @since 0.1.0
 * @category models
 */
export class AssetRecord extends Schema.Class<AssetRecord>("@sightline/core/AssetRecord")(
  Schema.Struct({
    id: AssetId,
    organization_id: OrganizationId,
    chat_id: ChatId,
    /** The cell that produced the asset. */
    cell_id: CellId,
    /** The cell of the assistant message the asset belongs to, once that message exists. */
    message_cell_id: Schema.optional(CellId),
    name: Schema.String,
    type: AssetType,
    mime_type: Schema.String,
    storage_key: Schema.optional(Schema.NonEmptyString),
    content: Schema.optional(Schema.String),
    size_bytes: Schema.optional(Schema.NonNegativeInt),
    created_at: Schema.DateTimeUtc
  }).pipe(Schema.filter((a) =>
    (a.storage_key === undefined) !== (a.content === undefined) ||
    "an asset has exactly one of storage_key (stored bytes) and content (inline text)"
  ))
) {}

/**
 * The blob store key of an asset: scoped by organization and chat so a prefix deletes a chat's files.
 *
 * @since 0.1.0
 * @category utils
 */
export const storageKey = (asset: {
  readonly organization_id: OrganizationId
  readonly chat_id: ChatId
  readonly id: AssetId
}): string => `${asset.organization_id}/chats/${asset.chat_id}/assets/${asset.id}`

/**
 * How to render a stored asset: the freshly signed URL (for stored bytes) and whether this is Get Chat.
 *
 * @since 0.1.0
 * @category models
 */
export interface RenderOptions {
  /** A signed URL for an asset with stored bytes; ignored for inline assets, which have none. */
  readonly url?: string | undefined
  /** Get Chat adds `message_cell_id`; every other response leaves it out (seed: "Get Chat only"). */
  readonly withMessageCellId?: boolean | undefined
}

/**
 * Renders a stored asset in its wire shape; the storage key never leaves core.
 *
 * @since 0.1.0
 * @category utils
 */
export const toAsset = (record: AssetRecord, options: RenderOptions = {}): Asset =>
  TrustedSchema.make(Asset, {
    name: record.name,
    type: record.type,
    cell_id: record.cell_id,
    created_at: record.created_at,
    ...(record.content !== undefined
      ? { content: record.content }
      : options.url !== undefined
      ? { url: options.url }
      : {}),
    ...(options.withMessageCellId === true && record.message_cell_id !== undefined
      ? { message_cell_id: record.message_cell_id }
      : {})
  })

/**
 * The content of a `table` asset: a query result's first rows, as JSON.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TableContent = Schema.Struct({
  columns: Schema.Array(Schema.Struct({ name: Schema.String })),
  rows: Schema.Array(Schema.Array(Schema.Unknown)),
  /** The rows the query returned (more than `rows` holds when it was cut). */
  row_count: Schema.Number,
  truncated: Schema.Boolean
})
export type TableContent = typeof TableContent.Type

/**
 * The rows of a `table` asset's content, when it reads as one.
 *
 * @since 0.1.0
 * @category utils
 */
export const tableRows = (content: string): Option.Option<ReadonlyArray<ReadonlyArray<unknown>>> =>
  Option.map(Schema.decodeUnknownOption(Schema.parseJson(TableContent))(content), (table) => table.rows)
