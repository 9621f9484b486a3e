/**
 * A stored report as it is served (Run Playbook, Get Playbook): each image of its run becomes a
 * URL of its asset, signed at this read, in `image_url` and in `html_preview` alike, so both work
 * for as long as any asset URL does, however old the report.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { SignAssetUrl } from "../Chats.js"
import * as Report from "../Report.js"
import * as ReportHtml from "../ReportHtml.js"

export const served = (record: Report.ReportRecord, sign: SignAssetUrl): Effect.Effect<Report.Report> =>
  Effect.gen(function*() {
    const signed = new Map<string, string>()
    for (const url of Report.imageUrls(record.blocks)) {
      const asset = Report.assetOfRef(url)
      if (asset !== undefined && !signed.has(url)) signed.set(url, yield* sign(asset))
    }
    // Reports stored before their images were kept as assets name them `chart:<n>`, which nothing
    // resolves any more: they are served as they were stored.
    if (signed.size === 0) return Report.toReport(record)
    const blocks = Report.replaceImageUrls(record.blocks, (url) => signed.get(url) ?? url)
    const urls = new Set(signed.values())
    const html = ReportHtml.html({ subject: record.subject, summary: record.summary, blocks }, {
      image: (url) => (urls.has(url) || url.startsWith("https://") ? url : undefined)
    })
    return Report.toReport(new Report.ReportRecord({ ...record, blocks, html_preview: html }, true))
  })
