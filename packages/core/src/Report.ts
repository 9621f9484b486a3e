/**
 * Reports: what a playbook run produces and delivers (e-mail, chat channel), made of layout blocks.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { type AssetId, ChatId, OrganizationId, PlaybookId, ReportId } from "./Ids.js"
import * as TrustedSchema from "./TrustedSchema.js"

/**
 * The kinds of block a report is laid out with.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BlockType = Schema.Literal("hero", "text", "image", "list", "image_text", "card", "divider", "spacer")
export type BlockType = typeof BlockType.Type

/**
 * How a block's image or frame is shaped.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BlockVariant = Schema.Literal("circular", "rounded", "pill", "none")
export type BlockVariant = typeof BlockVariant.Type

/**
 * A block of a report; cards nest blocks.
 *
 * @since 0.1.0
 * @category models
 */
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

/**
 * The schema of a block (recursive through `blocks`).
 *
 * @since 0.1.0
 * @category schemas
 */
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

/**
 * The most blocks (nested ones included) a report may have.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxBlocks = 200

/**
 * The most characters of any one text of a report.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxTextLength = 20_000

const countBlocks = (blocks: ReadonlyArray<Block>): number =>
  blocks.reduce((n, block) => n + 1 + countBlocks(block.blocks ?? []), 0)

const longestText = (blocks: ReadonlyArray<Block>): number =>
  blocks.reduce((longest, block) =>
    Math.max(
      longest,
      block.heading?.length ?? 0,
      block.content?.length ?? 0,
      ...(block.items ?? []).map((item) => item.length),
      longestText(block.blocks ?? [])
    ), 0)

/**
 * What the model writes through `write_report`: the seed's Report without what the server adds.
 * An image's `image_url` is `chart:<n>` (the n-th chart of the run, as `create_chart` names it) or
 * an `https://` URL; anything else (`javascript:`, `data:`, plain http) is refused so that a report
 * cannot carry a script or leak its reader's address to a plain-text tracker.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReportDraft = Schema.Struct({
  subject: Schema.String.pipe(Schema.filter((s) => s.trim().length > 0 || "subject must not be empty")),
  summary: Schema.String,
  blocks: Schema.Array(Block)
}).pipe(
  Schema.filter((draft) => {
    if (draft.subject.length > 300) return "subject must be at most 300 characters"
    if (countBlocks(draft.blocks) > maxBlocks) return `a report has at most ${maxBlocks} blocks`
    if (Math.max(draft.summary.length, longestText(draft.blocks)) > maxTextLength) {
      return `a text of a report has at most ${maxTextLength} characters`
    }
    const bad = imageUrls(draft.blocks).find((url) => !isAllowedImageUrl(url))
    return bad === undefined ||
      `image_url ${JSON.stringify(bad.slice(0, 80))} is neither chart:<n> (a chart of this run) nor an https URL`
  }),
  Schema.annotations({ identifier: "ReportDraft" })
)
export type ReportDraft = typeof ReportDraft.Type

/**
 * A chart of a report, rendered as an image asset of the run.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReportImage {
  /** The `image_url` the report uses for it (`chart:<n>`). */
  readonly ref: string
  readonly assetId: AssetId
  readonly storageKey: string
  readonly mimeType: string
}

/**
 * The chart reference an image block uses for the run's n-th chart (1-based).
 *
 * @since 0.1.0
 * @category utils
 */
export const chartRef = (n: number): string => `chart:${n}`

/**
 * The chart number of a `chart:<n>` reference.
 *
 * @since 0.1.0
 * @category utils
 */
export const chartNumber = (url: string): number | undefined => {
  const match = /^chart:(\d{1,4})$/.exec(url)
  return match === null ? undefined : Number(match[1])
}

const isAllowedImageUrl = (url: string): boolean => chartNumber(url) !== undefined || /^https:\/\/[^\s"'<>]+$/.test(url)

/**
 * Every `image_url` of the blocks, nested ones included, in document order.
 *
 * @since 0.1.0
 * @category utils
 */
export const imageUrls = (blocks: ReadonlyArray<Block>): ReadonlyArray<string> =>
  blocks.flatMap((block) => [
    ...(block.image_url === undefined ? [] : [block.image_url]),
    ...imageUrls(block.blocks ?? [])
  ])

/**
 * How a stored report names an image its run made: the asset that holds the chart. A draft never
 * carries one (`ReportDraft` takes `chart:<n>` and https URLs only); the run writes it in place of
 * `chart:<n>`, and the served report gives a signed URL of the asset instead.
 *
 * @since 0.1.0
 * @category utils
 */
export const assetRef = (id: AssetId): string => `asset:${id}`

/**
 * The asset an `asset:<id>` reference names.
 *
 * @since 0.1.0
 * @category utils
 */
export const assetOfRef = (url: string): AssetId | undefined => {
  const match = /^asset:([0-9a-f-]{36})$/.exec(url)
  return match === null ? undefined : match[1] as AssetId
}

/**
 * The blocks with every `image_url` (nested ones included) replaced by `replace`'s answer.
 *
 * @since 0.1.0
 * @category utils
 */
export const replaceImageUrls = (
  blocks: ReadonlyArray<Block>,
  replace: (url: string) => string
): ReadonlyArray<Block> =>
  blocks.map((block) => ({
    ...block,
    ...(block.image_url === undefined ? {} : { image_url: replace(block.image_url) }),
    ...(block.blocks === undefined ? {} : { blocks: replaceImageUrls(block.blocks, replace) })
  }))

/**
 * How the delivery to one target went.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeliveryOutcome = Schema.Struct({
  /** `email` or `chat_channel`. */
  channel: Schema.Literal("email", "chat_channel"),
  /** The address or the channel id. */
  target: Schema.String,
  status: Schema.Literal("delivered", "failed"),
  /** Why it failed (safe to show to the playbook's owner). */
  error: Schema.optional(Schema.String)
}).annotations({ identifier: "DeliveryOutcome" })
export type DeliveryOutcome = typeof DeliveryOutcome.Type

/**
 * A report as served (Run Playbook, Get Playbook).
 *
 * @since 0.1.0
 * @category models
 */
export class Report extends Schema.Class<Report>("@sightline/core/Report")({
  id: ReportId,
  subject: Schema.String,
  summary: Schema.String,
  blocks: Schema.Array(Block),
  html_preview: Schema.String,
  /** The chat the run produced the report in. */
  chat_id: ChatId,
  /** One outcome per delivery target; empty when the playbook has none. */
  deliveries: Schema.optionalWith(Schema.Array(DeliveryOutcome), { default: () => [] }),
  created_at: Schema.DateTimeUtc
}) {}

/**
 * A report as stored: the served fields plus its playbook and organization.
 *
 * @since 0.1.0
 * @category models
 */
export class ReportRecord extends Report.extend<ReportRecord>("@sightline/core/ReportRecord")({
  playbook_id: PlaybookId,
  organization_id: OrganizationId
}) {}

/**
 * The served shape of a stored report.
 *
 * @since 0.1.0
 * @category utils
 */
export const toReport = (record: ReportRecord): Report =>
  TrustedSchema.make(Report, {
    id: record.id,
    subject: record.subject,
    summary: record.summary,
    blocks: record.blocks,
    html_preview: record.html_preview,
    chat_id: record.chat_id,
    deliveries: record.deliveries,
    created_at: record.created_at
  })
