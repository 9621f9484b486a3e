import { useEffect, useState } from "react"
import { json } from "../api.js"
import { Chart } from "./Chart.js"
import { Markdown } from "./Markdown.js"

/** A report block (cards nest blocks). */
export interface Block {
  readonly type: string
  readonly heading?: string
  readonly content?: string
  readonly image_url?: string
  readonly image_alt?: string
  readonly items?: ReadonlyArray<string>
  readonly blocks?: ReadonlyArray<Block>
  readonly height?: number
}

const chartNumber = (url: string): number | undefined => {
  const match = /^chart:(\d{1,4})$/.exec(url)
  return match === null ? undefined : Number(match[1])
}

/**
 * The `src` of an image the report's run made: the server serves it as a signed URL of its asset,
 * relative to the server's root or absolute on this origin. Relative to the console's base, so a
 * console mounted under a path still finds it.
 */
const ownAsset = (url: string): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url, location.origin)
  } catch {
    return undefined
  }
  return parsed.origin === location.origin && parsed.pathname.startsWith("/v2/assets/")
    ? (parsed.pathname + parsed.search).slice(1)
    : undefined
}

function BlockView(
  { block, charts }: { readonly block: Block; readonly charts: ReadonlyArray<{ name: string; content: string }> }
) {
  const heading = block.heading === undefined
    ? null
    : block.type === "hero"
    ? <h3>{block.heading}</h3>
    : <h4>{block.heading}</h4>
  const image = () => {
    if (block.image_url === undefined) return null
    const n = chartNumber(block.image_url)
    if (n !== undefined) {
      const chart = charts[n - 1]
      return chart === undefined
        ? <p className="muted">[{block.image_alt ?? "chart"}]</p>
        : <Chart spec={chart.content} title={chart.name} />
    }
    const own = ownAsset(block.image_url)
    if (own !== undefined) return <img className="report-image" src={own} alt={block.image_alt ?? "chart"} />
    // Reports may only name https images; the console loads nothing from elsewhere, so it links them.
    return <a href={block.image_url} rel="noreferrer noopener" target="_blank">{block.image_alt ?? "Image"}</a>
  }
  switch (block.type) {
    case "divider":
      return <hr />
    case "spacer":
      return <div style={{ height: block.height ?? 16 }} />
    case "list":
      return (
        <section className="report-block">
          {heading}
          <ul>{(block.items ?? []).map((item, i) => <li key={i}>{item}</li>)}</ul>
        </section>
      )
    case "card":
      return (
        <section className="report-block card">
          {heading}
          {block.content === undefined ? null : <p>{block.content}</p>}
          {(block.blocks ?? []).map((inner, i) => <BlockView key={i} block={inner} charts={charts} />)}
        </section>
      )
    default:
      return (
        <section className="report-block">
          {heading}
          {image()}
          {block.content === undefined ? null : <Markdown text={block.content} />}
        </section>
      )
  }
}

/**
 * A playbook report drawn from its blocks: the charts its run rendered are images of their assets,
 * and a `chart:<n>` (a report whose run rendered no image) is the n-th chart of the report's chat.
 */
export function ReportView(
  { blocks, chatId }: { readonly blocks: ReadonlyArray<Block>; readonly chatId?: string | undefined }
) {
  const [charts, setCharts] = useState<ReadonlyArray<{ name: string; content: string }>>([])
  useEffect(() => {
    if (chatId === undefined) return
    void json<{ assets: Array<{ type: string; name: string; content?: string }> }>(`v2/chats/${chatId}`)
      .then((chat) =>
        setCharts(
          chat.assets.filter((a) => a.type === "chart" && a.content !== undefined) as Array<
            { name: string; content: string }
          >
        )
      )
      .catch(() => setCharts([]))
  }, [chatId])
  return (
    <div className="report-body">{blocks.map((block, i) => <BlockView key={i} block={block} charts={charts} />)}</div>
  )
}
