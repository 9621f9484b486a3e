/**
 * Reports: what a playbook run produces and delivers (e-mail, chat channel), made of layout blocks.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ChatId, OrganizationId, PlaybookId, ReportId } from "./Ids.js"

/** The kinds of block a report is laid out with. */
export const BlockType = Schema.Literal("hero", "text", "image", "list", "image_text", "card", "divider", "spacer")
export type BlockType = typeof BlockType.Type

/** How a block's image or frame is shaped. */
export const BlockVariant = Schema.Literal("circular", "rounded", "pill", "none")
export type BlockVariant = typeof BlockVariant.Type

/** A block of a report; cards nest blocks. */
export interface Block {
  readonly type: BlockType
  readonly heading?: string | undefined
  readonly content?: string | undefined
  readonly image_url?: string | undefined
  readonly image_alt?: string | undefined
  readonly variant?: BlockVariant | undefined
  readonly items?: ReadonlyArray<string> | undefined
  readonly blocks?: ReadonlyArray<Block> | undefined
  /** The height of a spacer (or an image), in pixels. */
  readonly height?: number | undefined
}

/** The schema of a block (recursive through `blocks`). */
export const Block: Schema.Schema<Block> = Schema.Struct({
  type: BlockType,
  heading: Schema.optional(Schema.String),
  content: Schema.optional(Schema.String),
  image_url: Schema.optional(Schema.String),
  image_alt: Schema.optional(Schema.String),
  variant: Schema.optional(BlockVariant),
  items: Schema.optional(Schema.Array(Schema.String)),
  blocks: Schema.optional(Schema.Array(Schema.suspend((): Schema.Schema<Block> => Block))),
  height: Schema.optional(Schema.NonNegativeInt)
}).annotations({ identifier: "Block" })

/** A report as served (Run Playbook, Get Playbook). */
export class Report extends Schema.Class<Report>("@sightline/core/Report")({
  id: ReportId,
  subject: Schema.String,
  summary: Schema.String,
  blocks: Schema.Array(Block),
  html_preview: Schema.String,
  /** The chat the run produced the report in. */
  chat_id: ChatId,
  created_at: Schema.DateTimeUtc
}) {}

/** A report as stored: the served fields plus its playbook and organization. */
export class ReportRecord extends Report.extend<ReportRecord>("@sightline/core/ReportRecord")({
  playbook_id: PlaybookId,
  organization_id: OrganizationId
}) {}

/** The served shape of a stored report. */
export const toReport = (record: ReportRecord): Report =>
  new Report({
    id: record.id,
    subject: record.subject,
    summary: record.summary,
    blocks: record.blocks,
    html_preview: record.html_preview,
    chat_id: record.chat_id,
    created_at: record.created_at
  })
