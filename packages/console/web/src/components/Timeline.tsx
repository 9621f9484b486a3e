import { type FormEvent, useState } from "react"
import type { Asset, Cell, ChatEvent, Clarification, Plan } from "../stream.js"
import { Chart } from "./Chart.js"
import { Markdown } from "./Markdown.js"
import { Table } from "./Table.js"

/** One step of a conversation as the console shows it. */
export type Item =
  | { readonly kind: "user"; readonly key: string; readonly text: string }
  | { readonly kind: "cell"; readonly key: string; readonly cell: Cell; readonly assets: ReadonlyArray<Asset> }
  | {
    readonly kind: "answer"
    readonly key: string
    readonly text: string
    readonly assets: ReadonlyArray<Asset>
    readonly provenance?: Provenance | undefined
  }
  | { readonly kind: "status"; readonly key: string; readonly status: string; readonly error?: string | undefined }
  | ({ readonly kind: "clarification"; readonly key: string } & Clarification)
  | ({ readonly kind: "plan"; readonly key: string } & Plan)

/** A choice of a clarification, as the asker picks it. */
export type Choice = Clarification["choices"][number]

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
    case "clarification":
      return [...items, {
        kind: "clarification",
        key: `${runKey}:clarification:${items.length}`,
        question: event.question,
        choices: event.choices
      }]
    case "plan": {
      // A later plan of the run (the steps one level deeper) replaces the one before, in its place.
      const plan: Item = { kind: "plan", key: `${runKey}:plan`, title: event.title, steps: event.steps }
      const at = items.findIndex((item) => item.key === plan.key)
      return at === -1 ? [...items, plan] : items.map((item, i) => (i === at ? plan : item))
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

/** Pins a cell's query to a dashboard (`POST /v2/chats/{id}/cells/{cellId}/pin`): what came of it, in words. */
export type Pin = (cellId: string, dashboard: string) => Promise<string>

/** A cell ran a query that can stand as a tile: a semantic or verified query, or SQL. */
const pinnable = (cell: Cell) =>
  cell.status === "completed" && cell.connector_id !== undefined &&
  (cell.semantic_query !== undefined || cell.trusted_source?.kind === "verified_query" || cell.type === "sql")

function PinForm({ cell, onPin }: { readonly cell: Cell; readonly onPin: Pin }) {
  const [dashboard, setDashboard] = useState("")
  const [status, setStatus] = useState<string>()
  const [pinning, setPinning] = useState(false)
  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setPinning(true)
    try {
      setStatus(await onPin(cell.id, dashboard))
    } catch (e) {
      setStatus((e as Error).message)
    } finally {
      setPinning(false)
    }
  }
  return (
    <details className="pin">
      <summary>Pin</summary>
      <form className="inline-form" aria-label={`Pin step ${cell.id}`} onSubmit={(e) => void submit(e)}>
        <label className="field">
          <span>Dashboard</span>
          <input
            required
            pattern="[a-z0-9][a-z0-9_\-]{0,63}"
            title="lowercase letters, digits, - and _"
            placeholder="sales"
            value={dashboard}
            onChange={(e) => setDashboard(e.target.value)}
          />
        </label>
        <button type="submit" disabled={pinning}>Pin to dashboard</button>
      </form>
      {status === undefined ? null : <p role="status">{status}</p>}
    </details>
  )
}

function CellView(
  { assets, cell, onPin }: {
    readonly cell: Cell
    readonly assets: ReadonlyArray<Asset>
    readonly onPin?: Pin | undefined
  }
) {
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
      {onPin !== undefined && pinnable(cell) ? <PinForm cell={cell} onPin={onPin} /> : null}
    </section>
  )
}

/** How an answer was made, as `GET /v2/chats/{id}` serves it per assistant message. */
export interface Provenance {
  readonly model: string
  readonly provider: string
  readonly provider_model: string
  readonly generations: number
  readonly input_tokens?: number
  readonly output_tokens?: number
  readonly model_latency_ms: number
  readonly tool_calls: ReadonlyArray<{
    readonly name: string
    readonly connector_id?: number
    readonly failed: boolean
    readonly duration_ms: number
  }>
  readonly library_commit?: string
  readonly semantic_models: ReadonlyArray<{
    readonly connector_id: number
    readonly model: string
    readonly source: string
    readonly path?: string
  }>
  readonly client_attributes_hash?: string
  /** The plans of the investigations it ran. */
  readonly plans?: ReadonlyArray<Plan>
}

/** The "how this was answered" panel of an answer. */
function ProvenanceView({ provenance }: { readonly provenance: Provenance }) {
  const tokens = provenance.input_tokens === undefined
    ? "not reported by the provider"
    : `${provenance.input_tokens} in, ${provenance.output_tokens ?? 0} out`
  return (
    <details className="provenance">
      <summary>How this was answered</summary>
      <dl>
        <dt>Model</dt>
        <dd>{provenance.model} ({provenance.provider}: {provenance.provider_model})</dd>
        <dt>Tokens</dt>
        <dd>{tokens}, over {provenance.generations} steps, {provenance.model_latency_ms} ms in the model</dd>
        <dt>Library</dt>
        <dd>
          {provenance.library_commit === undefined ? "empty" : `commit ${provenance.library_commit.slice(0, 12)}`}
        </dd>
        <dt>Definitions</dt>
        <dd>
          {provenance.semantic_models.length === 0 ?
            "none" :
            provenance.semantic_models.map((m) =>
              `${m.model} (${
                m.source === "library" ? m.path : "derived from the schema"
              }) for connector ${m.connector_id}`
            ).join("; ")}
        </dd>
        <dt>Tools</dt>
        <dd>
          {provenance.tool_calls.length === 0 ? "none" : (
            <ol>
              {provenance.tool_calls.map((call, i) => (
                <li key={i}>
                  {call.name}
                  {call.connector_id === undefined ? "" : ` on connector ${call.connector_id}`}, {call.duration_ms} ms
                  {call.failed ? " (failed)" : ""}
                </li>
              ))}
            </ol>
          )}
        </dd>
        <dt>Row-level security</dt>
        <dd>
          {provenance.client_attributes_hash === undefined
            ? "no client attributes"
            : `client attributes, fingerprint ${provenance.client_attributes_hash.slice(0, 12)}`}
        </dd>
      </dl>
    </details>
  )
}

/**
 * A conversation: questions, steps with their SQL or code, tables, charts and the answers. The
 * choices of the latest clarification, while no question has followed it, are buttons (`onChoose`).
 */
export function Timeline(
  { items, onChoose, onPin }: {
    readonly items: ReadonlyArray<Item>
    readonly onChoose?: ((choice: Choice) => void) | undefined
    readonly onPin?: Pin | undefined
  }
) {
  const open = items.map((item) => item.kind).lastIndexOf("clarification")
  const answerable = open >= 0 && !items.slice(open).some((item) => item.kind === "user")
  return (
    <ol className="timeline">
      {items.map((item, i) => {
        switch (item.kind) {
          case "clarification":
            return (
              <li key={item.key} className="clarification">
                <div role="group" aria-label={item.question} className="choices">
                  {item.choices.map((choice) => (
                    <button
                      key={choice.id}
                      type="button"
                      title={choice.question}
                      disabled={onChoose === undefined || !answerable || i !== open}
                      onClick={() => onChoose?.(choice)}
                    >
                      {choice.label}
                    </button>
                  ))}
                </div>
              </li>
            )
          case "plan": {
            // A step is done when its cell is: the cell's content is the step's title.
            const cells = items.slice(i + 1).flatMap((other) => other.kind === "cell" ? [other.cell] : [])
            const state = (title: string) => {
              const cell = cells.find((c) => c.content === title)
              return cell === undefined ? "pending" : cell.status === "completed" ? "done" : cell.status
            }
            return (
              <li key={item.key} className="plan">
                <section aria-label={`Plan: ${item.title}`}>
                  <p className="plan-title">Plan: {item.title}</p>
                  <ul className="checklist">
                    {item.steps.map((step) => (
                      <li
                        key={step.id}
                        className={`step step-${state(step.title)} level-${step.level}`}
                        aria-label={`${step.title}, ${state(step.title)}`}
                      >
                        <span aria-hidden="true">{state(step.title) === "done" ? "☑" : "☐"}</span> {step.title}
                      </li>
                    ))}
                  </ul>
                </section>
              </li>
            )
          }
          case "user":
            return (
              <li key={item.key} className="bubble user">
                <p>{item.text}</p>
              </li>
            )
          case "cell":
            return (
              <li key={item.key}>
                <CellView cell={item.cell} assets={item.assets} onPin={onPin} />
              </li>
            )
          case "answer":
            return (
              <li key={item.key} className="bubble answer">
                {item.text === "" ? null : <Markdown text={item.text} />}
                {item.assets.map((asset, i) => <AssetView key={`${asset.name}:${i}`} asset={asset} />)}
                {item.provenance === undefined ? null : <ProvenanceView provenance={item.provenance} />}
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
