import type { Asset, Cell, ChatEvent } from "../stream.js"
import { Chart } from "./Chart.js"
import { Table } from "./Table.js"

/** One step of a conversation as the console shows it. */
export type Item =
  | { readonly kind: "user"; readonly key: string; readonly text: string }
  | { readonly kind: "cell"; readonly key: string; readonly cell: Cell; readonly assets: ReadonlyArray<Asset> }
  | { readonly kind: "answer"; readonly key: string; readonly text: string; readonly assets: ReadonlyArray<Asset> }
  | { readonly kind: "status"; readonly key: string; readonly status: string; readonly error?: string | undefined }

/** Folds one streamed event into the items of the current run. */
export const applyEvent = (items: ReadonlyArray<Item>, event: ChatEvent, runKey: string): ReadonlyArray<Item> => {
  switch (event.type) {
    case "metadata":
      return items
    case "text": {
      const last = items[items.length - 1]
      if (last?.kind === "answer") return [...items.slice(0, -1), { ...last, text: last.text + event.text }]
      return [...items, { kind: "answer", key: `${runKey}:answer:${items.length}`, text: event.text, assets: [] }]
    }
    case "cell": {
      const at = items.findIndex((item) => item.kind === "cell" && item.cell.id === event.cell.id)
      if (at === -1) return [...items, { kind: "cell", key: event.cell.id, cell: event.cell, assets: [] }]
      const existing = items[at] as Extract<Item, { kind: "cell" }>
      return items.map((item, i) => (i === at ? { ...existing, cell: event.cell } : item))
    }
    case "asset": {
      const at = items.findIndex((item) => item.kind === "cell" && item.cell.id === event.asset.cell_id)
      if (at !== -1) {
        return items.map((item, i) =>
          i === at && item.kind === "cell" ? { ...item, assets: [...item.assets, event.asset] } : item
        )
      }
      return [...items, { kind: "answer", key: `${runKey}:asset:${items.length}`, text: "", assets: [event.asset] }]
    }
    case "done":
      return [...items, { kind: "status", key: `${runKey}:done`, status: event.status, error: event.error }]
  }
}

function AssetView({ asset }: { readonly asset: Asset }) {
  if (asset.type === "table" && asset.content !== undefined) return <Table content={asset.content} name={asset.name} />
  if (asset.type === "chart" && asset.content !== undefined) return <Chart spec={asset.content} title={asset.name} />
  if (asset.url !== undefined) {
    // Signed URLs are relative to the API's root, which is the console's too.
    const href = asset.url.replace(/^\//, "")
    if (asset.type === "image") return <img className="asset-image" src={href} alt={asset.name} />
    return <a className="download" href={href} download={asset.name}>Download {asset.name}</a>
  }
  return null
}

const sourceOf = (cell: Cell): string | undefined => cell.query ?? cell.code

function CellView({ assets, cell }: { readonly cell: Cell; readonly assets: ReadonlyArray<Asset> }) {
  const source = sourceOf(cell)
  const timing = cell.execution_time_ms === undefined ? "" : ` · ${cell.execution_time_ms} ms`
  return (
    <section className={`cell cell-${cell.status}`} aria-label={`${cell.type} step, ${cell.status}`}>
      <header className="cell-head">
        <span className="badge">{cell.type}</span>
        <span className="cell-status">{cell.status}{timing}</span>
        {cell.trusted_source === undefined ? null : (
          <span
            className="badge trusted"
            title={`${cell.trusted_source.path} at ${cell.trusted_source.commit.slice(0, 12)}`}
          >
            Trusted: {cell.trusted_source.kind === "verified_query" ? "verified query" : "metric"}{" "}
            {cell.trusted_source.name}
          </span>
        )}
        {cell.content !== undefined && cell.type !== "markdown" ? <span>{cell.content}</span> : null}
      </header>
      {cell.reading === undefined ? null : <p className="reading">{cell.reading.text}</p>}
      {source === undefined ? null : (
        <details className="source">
          <summary>{cell.type === "sql" ? "SQL" : "Code"}</summary>
          <pre><code>{source}</code></pre>
        </details>
      )}
      {cell.error === undefined ? null : <p className="error">{cell.error}</p>}
      {assets.map((asset, i) => <AssetView key={`${asset.name}:${i}`} asset={asset} />)}
    </section>
  )
}

/** A conversation: questions, steps with their SQL or code, tables, charts and the answers. */
export function Timeline({ items }: { readonly items: ReadonlyArray<Item> }) {
  return (
    <ol className="timeline">
      {items.map((item) => {
        switch (item.kind) {
          case "user":
            return (
              <li key={item.key} className="bubble user">
                <p>{item.text}</p>
              </li>
            )
          case "cell":
            return (
              <li key={item.key}>
                <CellView cell={item.cell} assets={item.assets} />
              </li>
            )
          case "answer":
            return (
              <li key={item.key} className="bubble answer">
                {item.text === "" ? null : <div className="answer-text">{item.text}</div>}
                {item.assets.map((asset, i) => <AssetView key={`${asset.name}:${i}`} asset={asset} />)}
              </li>
            )
          case "status":
            if (item.status === "completed") return null
            return (
              <li key={item.key} className={`run-status ${item.status}`} role="status">
                {item.error?.startsWith("cancelled") === true
                  ? "Answer cancelled."
                  : `Answer ${item.status}${item.error === undefined ? "" : `: ${item.error}`}`}
              </li>
            )
        }
      })}
    </ol>
  )
}
