/**
 * Renders a report's blocks as e-mail-safe HTML and as plain text.
 *
 * The HTML is what mail clients render well: one 600-pixel table, inline styles only, no scripts,
 * no style sheets, no forms. Every text is escaped, so a model that writes `<script>` shows the
 * characters. Images come from the caller's `image` function: `chart:<n>` references become a signed
 * URL for `html_preview` and a `cid:` for a mail, and a URL the caller does not resolve is shown as
 * its alternative text, never fetched.
 *
 * @since 0.1.0
 */
import type { Block } from "./Report.js"

/**
 * How to render.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The `src` of an image block's `image_url`, or `undefined` to show its alternative text instead. */
  readonly image: (url: string) => string | undefined
}

/**
 * A rendered report.
 *
 * @since 0.1.0
 * @category models
 */
export interface Rendered {
  readonly html: string
  readonly text: string
}

/**
 * Text made safe to place in HTML (element content or a quoted attribute).
 *
 * @since 0.1.0
 * @category utils
 */
export const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === "\"" ? "&quot;" : "&#39;"
  )

// Paragraphs from blank lines, line breaks kept: models write plain text with newlines.
const paragraphs = (text: string, style: string): string =>
  text.split(/\n{2,}/).filter((p) => p.trim() !== "").map((p) =>
    `<p style="${style}">${escapeHtml(p.trim()).replace(/\n/g, "<br>")}</p>`
  ).join("")

const font = "font-family:Helvetica,Arial,sans-serif;color:#1f2937;"
const bodyText = `${font}font-size:15px;line-height:1.5;margin:0 0 12px 0;`

const radius = (variant: Block["variant"]): string => {
  switch (variant) {
    case "circular":
      return "border-radius:50%;"
    case "pill":
      return "border-radius:999px;"
    case "rounded":
      return "border-radius:8px;"
    default:
      return ""
  }
}

const clampHeight = (height: number | undefined, fallback: number): number =>
  Math.min(Math.max(height ?? fallback, 0), 2000)

const imageHtml = (block: Block, options: Options, width: number): string => {
  const alt = block.image_alt ?? block.heading ?? "image"
  const src = block.image_url === undefined ? undefined : options.image(block.image_url)
  if (src === undefined) {
    return `<p style="${bodyText}color:#6b7280;font-style:italic;">[${escapeHtml(alt)}]</p>`
  }
  const size = block.variant === "circular"
    ? `width="${Math.min(width, 160)}" height="${Math.min(width, 160)}"`
    : `width="${width}"`
  return `<img src="${escapeHtml(src)}" alt="${
    escapeHtml(alt)
  }" ${size} style="display:block;max-width:100%;height:auto;border:0;${radius(block.variant)}">`
}

const row = (content: string, padding = "0 24px 16px 24px"): string =>
  `<tr><td style="padding:${padding};">${content}</td></tr>`

const heading = (text: string, size: number): string =>
  `<h2 style="${font}font-size:${size}px;line-height:1.3;margin:0 0 8px 0;">${escapeHtml(text)}</h2>`

const blockHtml = (block: Block, options: Options, width: number): string => {
  switch (block.type) {
    case "hero":
      return row(
        `<h1 style="${font}font-size:26px;line-height:1.25;margin:0 0 8px 0;">${escapeHtml(block.heading ?? "")}</h1>` +
          (block.content === undefined ? "" : paragraphs(block.content, `${bodyText}color:#4b5563;`)) +
          (block.image_url === undefined ? "" : imageHtml(block, options, width)),
        "24px 24px 16px 24px"
      )
    case "text":
      return row(
        (block.heading === undefined ? "" : heading(block.heading, 18)) +
          paragraphs(block.content ?? "", bodyText)
      )
    case "image":
      return row(
        imageHtml(block, options, width) +
          (block.content === undefined ? "" : paragraphs(block.content, `${bodyText}font-size:13px;color:#6b7280;`))
      )
    case "list":
      return row(
        (block.heading === undefined ? "" : heading(block.heading, 18)) +
          `<ul style="${font}font-size:15px;line-height:1.5;margin:0;padding-left:20px;">${
            (block.items ?? []).map((item) => `<li style="margin:0 0 4px 0;">${escapeHtml(item)}</li>`).join("")
          }</ul>`
      )
    case "image_text":
      return row(
        `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0"><tr>` +
          `<td width="180" valign="top" style="padding:0 16px 0 0;">${imageHtml(block, options, 180)}</td>` +
          `<td valign="top">${block.heading === undefined ? "" : heading(block.heading, 17)}${
            paragraphs(block.content ?? "", bodyText)
          }</td></tr></table>`
      )
    case "card":
      return row(
        `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="border:1px solid #e5e7eb;${
          block.variant === "none" ? "" : "border-radius:8px;"
        }background:#f9fafb;">` +
          (block.heading === undefined && block.content === undefined
            ? ""
            : row(
              (block.heading === undefined ? "" : heading(block.heading, 17)) +
                (block.content === undefined ? "" : paragraphs(block.content, bodyText)),
              "16px 16px 0 16px"
            )) +
          (block.blocks ?? []).map((inner) => blockHtml(inner, options, width - 48)).join("") +
          `</table>`
      )
    case "divider":
      return row(`<hr style="border:0;border-top:1px solid #e5e7eb;margin:0;">`)
    case "spacer":
      return `<tr><td style="height:${clampHeight(block.height, 16)}px;line-height:0;font-size:0;">&nbsp;</td></tr>`
  }
}

/**
 * The HTML of a report: a complete document, safe to send as a mail body or show in an iframe.
 *
 * @since 0.1.0
 * @category utils
 */
export const html = (
  report: { readonly subject: string; readonly summary: string; readonly blocks: ReadonlyArray<Block> },
  options: Options
): string =>
  [
    `<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">`,
    `<title>${escapeHtml(report.subject)}</title></head>`,
    `<body style="margin:0;padding:0;background:#f3f4f6;">`,
    // The summary as a hidden preheader: what mail clients show next to the subject.
    `<div style="display:none;max-height:0;overflow:hidden;">${escapeHtml(report.summary)}</div>`,
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background:#f3f4f6;"><tr><td align="center" style="padding:24px 8px;">`,
    `<table role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" style="width:600px;max-width:100%;background:#ffffff;border-radius:8px;">`,
    report.blocks.length === 0 ? row(paragraphs(report.summary, bodyText), "24px") : "",
    report.blocks.map((block) => blockHtml(block, options, 552)).join(""),
    `</table></td></tr></table></body></html>`
  ].join("")

const blockText = (block: Block, options: Options): ReadonlyArray<string> => {
  const image = () => {
    const src = block.image_url === undefined ? undefined : options.image(block.image_url)
    const alt = block.image_alt ?? block.heading ?? "image"
    return src === undefined || src.startsWith("cid:") ? `[${alt}]` : `[${alt}: ${src}]`
  }
  switch (block.type) {
    case "hero":
      return [(block.heading ?? "").toUpperCase(), ...(block.content === undefined ? [] : [block.content])]
    case "text":
      return [...(block.heading === undefined ? [] : [block.heading]), block.content ?? ""]
    case "image":
      return [image(), ...(block.content === undefined ? [] : [block.content])]
    case "list":
      return [
        ...(block.heading === undefined ? [] : [block.heading]),
        (block.items ?? []).map((item) => `- ${item}`).join("\n")
      ]
    case "image_text":
      return [image(), ...(block.heading === undefined ? [] : [block.heading]), block.content ?? ""]
    case "card":
      return [
        ...(block.heading === undefined ? [] : [block.heading]),
        ...(block.content === undefined ? [] : [block.content]),
        ...(block.blocks ?? []).flatMap((inner) => blockText(inner, options))
      ]
    case "divider":
      return ["----"]
    case "spacer":
      return []
  }
}

/**
 * The plain-text part of a report.
 *
 * @since 0.1.0
 * @category utils
 */
export const text = (
  report: { readonly subject: string; readonly summary: string; readonly blocks: ReadonlyArray<Block> },
  options: Options
): string =>
  [report.subject, report.summary, ...report.blocks.flatMap((block) => blockText(block, options))]
    .filter((part) => part.trim() !== "")
    .join("\n\n")

/**
 * Both renderings.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (
  report: { readonly subject: string; readonly summary: string; readonly blocks: ReadonlyArray<Block> },
  options: Options
): Rendered => ({ html: html(report, options), text: text(report, options) })
