import { type DragEvent, type FormEvent, useCallback, useEffect, useState } from "react"
import { json } from "../api.js"
import { Chart } from "../components/Chart.js"
import { Table } from "../components/Table.js"

interface Summary {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly connector?: string
  readonly tiles?: number
  readonly problems?: ReadonlyArray<string>
}

interface Definition {
  readonly title: string
  readonly description?: string
  readonly connector: string
  readonly filters?: {
    readonly dimensions?: ReadonlyArray<{ readonly dimension: string; readonly values?: ReadonlyArray<unknown> }>
    readonly time?: { readonly start?: string; readonly end?: string; readonly grain?: string }
  }
}

interface Tile {
  readonly index: number
  readonly title: string
  readonly visualization: { readonly type: string }
  readonly layout: { readonly x: number; readonly y: number; readonly w: number; readonly h: number }
  readonly status: "ok" | "failed"
  readonly error?: string
  readonly columns: ReadonlyArray<{ readonly name: string }>
  readonly rows: ReadonlyArray<ReadonlyArray<unknown>>
  readonly reading?: { readonly text: string }
  readonly trusted?: { readonly kind: string; readonly name: string; readonly path: string; readonly commit: string }
  readonly chart?: unknown
  readonly figure?: {
    readonly column: string
    readonly value: number | null
    readonly format?: string
    readonly unit?: string
    readonly previous?: {
      readonly start: string
      readonly end: string
      readonly value: number | null
      readonly change?: number
    }
  }
}

interface Result {
  readonly title: string
  readonly commit: string
  readonly tiles: ReadonlyArray<Tile>
}

/** A figure as people read one: a currency with two decimals, a percent, a count grouped. */
const figureText = (value: number | null, format: string | undefined): string => {
  if (value === null) return "none"
  if (format === "percent") {
    return new Intl.NumberFormat("en-US", { style: "percent", maximumFractionDigits: 1 }).format(value)
  }
  return new Intl.NumberFormat("en-US", {
    maximumFractionDigits: format === "integer" ? 0 : 2,
    minimumFractionDigits: format === "currency" ? 2 : 0
  }).format(value)
}

/** The dashboards of the library the member may read, and one of them drawn on its grid. */
export function DashboardsPage(
  { name, navigate }: { readonly name?: string | undefined; readonly navigate: (hash: string) => void }
) {
  return name === undefined ? <DashboardList navigate={navigate} /> : <DashboardView name={name} />
}

function DashboardList({ navigate }: { readonly navigate: (hash: string) => void }) {
  const [dashboards, setDashboards] = useState<ReadonlyArray<Summary>>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    json<{ dashboards: Array<Summary> }>("v2/dashboards").then((r) => setDashboards(r.dashboards))
      .catch((e) => setError(e.message))
  }, [])
  return (
    <main className="page" aria-labelledby="dashboards-title">
      <h1 id="dashboards-title">Dashboards</h1>
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      {dashboards?.length === 0
        ? <p className="muted">No dashboards yet: pin an answer from a chat to start one.</p>
        : null}
      <ul className="dashboard-list">
        {(dashboards ?? []).map((d) => (
          <li key={d.name} className="card">
            <a href={`#/dashboards/${d.name}`} onClick={() => navigate(`#/dashboards/${d.name}`)}>
              {d.title ?? d.name}
            </a>
            {d.description === undefined ? null : <p>{d.description}</p>}
            <p className="muted">
              {d.problems === undefined ? `${d.tiles} tiles on ${d.connector}` : `does not read: ${d.problems[0]}`}
            </p>
          </li>
        ))}
      </ul>
    </main>
  )
}

type Layout = Tile["layout"]
interface Draft {
  readonly title?: string
  readonly layout?: Layout
}

const clamp = (layout: Layout): Layout => {
  const w = Math.min(12, Math.max(1, layout.w))
  return {
    x: Math.min(12 - w, Math.max(0, layout.x)),
    y: Math.max(0, layout.y),
    w,
    h: Math.min(24, Math.max(1, layout.h))
  }
}

function DashboardView({ name }: { readonly name: string }) {
  const [definition, setDefinition] = useState<Definition>()
  const [editing, setEditing] = useState(false)
  const [drafts, setDrafts] = useState<ReadonlyMap<number, Draft>>(new Map())
  const [filed, setFiled] = useState<string>()
  const [result, setResult] = useState<Result>()
  const [error, setError] = useState<string>()
  const [running, setRunning] = useState(false)
  const [values, setValues] = useState<Record<string, string>>({})
  const [period, setPeriod] = useState<{ start: string; end: string; grain: string }>({ start: "", end: "", grain: "" })

  const run = useCallback(async (filters?: unknown) => {
    setRunning(true)
    setError(undefined)
    try {
      setResult(
        await json<Result>(`v2/dashboards/${name}/query`, {
          method: "POST",
          body: filters === undefined ? {} : { filters }
        })
      )
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setRunning(false)
    }
  }, [name])

  useEffect(() => {
    void json<{ definition: Definition }>(`v2/dashboards/${name}`).then((view) => {
      setDefinition(view.definition)
      const shared = view.definition.filters
      setValues(Object.fromEntries(
        (shared?.dimensions ?? []).map((f) => [f.dimension, (f.values ?? []).map(String).join(", ")])
      ))
      setPeriod({ start: shared?.time?.start ?? "", end: shared?.time?.end ?? "", grain: shared?.time?.grain ?? "" })
      return run()
    }).catch((e) => setError(e.message))
  }, [name, run])

  const draftOf = (tile: Tile): Tile => {
    const draft = drafts.get(tile.index)
    return draft === undefined ? tile : { ...tile, ...draft }
  }
  const change = (tile: Tile, draft: Draft) =>
    setDrafts(new Map(drafts).set(tile.index, { ...drafts.get(tile.index), ...draft }))
  const move = (tile: Tile, by: Partial<Layout>) => {
    const at = draftOf(tile).layout
    change(tile, {
      layout: clamp({ x: at.x + (by.x ?? 0), y: at.y + (by.y ?? 0), w: at.w + (by.w ?? 0), h: at.h + (by.h ?? 0) })
    })
  }
  // A tile dropped on the grid goes to the cell under the pointer.
  const drop = (event: DragEvent<HTMLDivElement>) => {
    event.preventDefault()
    const index = Number(event.dataTransfer.getData("text/plain"))
    const tile = result?.tiles.find((t) => t.index === index)
    if (tile === undefined) return
    const box = event.currentTarget.getBoundingClientRect()
    const rowHeight = Number.parseFloat(getComputedStyle(event.currentTarget).gridAutoRows) + 12.8
    const x = Math.floor(((event.clientX - box.left) / box.width) * 12)
    const y = Math.floor((event.clientY - box.top) / rowHeight)
    change(tile, { layout: clamp({ ...draftOf(tile).layout, x, y }) })
  }
  const save = async () => {
    setError(undefined)
    try {
      const tiles = [...drafts.entries()].map(([index, draft]) => ({ index, ...draft }))
      const saved = await json<{ change: { change_id: string; change_number: number; status: string } }>(
        `v2/dashboards/${name}/edit`,
        { method: "POST", body: { tiles } }
      )
      setEditing(false)
      setDrafts(new Map())
      const number = saved.change.change_number
      if (saved.change.status === "approved") {
        setFiled(`Change #${number} merged.`)
        return void run()
      }
      setFiled(`Change #${number} filed: the edit shows once it merges.`)
      // The page says when it merges (or is denied), and then shows it.
      const timer = setInterval(() => {
        void json<{ status: string }>(`v2/changes/${saved.change.change_id}`).then((now) => {
          if (now.status === "approved") {
            clearInterval(timer)
            setFiled(`Change #${number} merged.`)
            void run()
          } else if (now.status === "denied") {
            clearInterval(timer)
            setFiled(`Change #${number} was denied.`)
          }
        }).catch(() => clearInterval(timer))
      }, 2000)
    } catch (e) {
      setError((e as Error).message)
    }
  }

  const apply = (event: FormEvent) => {
    event.preventDefault()
    const dimensions = Object.fromEntries(
      Object.entries(values).map(([dimension, text]) => [
        dimension,
        text.split(",").map((v) => v.trim()).filter((v) => v !== "")
      ])
    )
    const time = period.start === "" && period.end === "" && period.grain === "" ? undefined : {
      ...(period.start === "" ? {} : { start: period.start }),
      ...(period.end === "" ? {} : { end: period.end }),
      ...(period.grain === "" ? {} : { grain: period.grain })
    }
    void run({ dimensions, ...(time === undefined ? {} : { time }) })
  }

  return (
    <main className="page" aria-labelledby="dashboard-title">
      <h1 id="dashboard-title">{definition?.title ?? name}</h1>
      {definition?.description === undefined ? null : <p>{definition.description}</p>}
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      {definition === undefined ? null : (
        <form className="inline-form filter-bar" aria-label="Filters" onSubmit={apply}>
          {(definition.filters?.dimensions ?? []).map((f) => (
            <label key={f.dimension} className="field">
              <span>{f.dimension}</span>
              <input
                value={values[f.dimension] ?? ""}
                placeholder="every value"
                onChange={(e) => setValues({ ...values, [f.dimension]: e.target.value })}
              />
            </label>
          ))}
          <label className="field">
            <span>From</span>
            <input type="date" value={period.start} onChange={(e) => setPeriod({ ...period, start: e.target.value })} />
          </label>
          <label className="field">
            <span>Until</span>
            <input type="date" value={period.end} onChange={(e) => setPeriod({ ...period, end: e.target.value })} />
          </label>
          <label className="field">
            <span>Grain</span>
            <select value={period.grain} onChange={(e) => setPeriod({ ...period, grain: e.target.value })}>
              <option value="">as each tile says</option>
              {["day", "week", "month", "quarter", "year"].map((g) => <option key={g} value={g}>{g}</option>)}
            </select>
          </label>
          <button type="submit" className="primary" disabled={running}>Apply</button>
        </form>
      )}
      <div className="toolbar">
        {editing
          ? (
            <>
              <button type="button" className="primary" disabled={drafts.size === 0} onClick={() => void save()}>
                Save as a change
              </button>
              <button type="button" onClick={() => (setEditing(false), setDrafts(new Map()))}>Cancel</button>
            </>
          )
          : <button type="button" onClick={() => setEditing(true)}>Edit layout</button>}
        {filed === undefined ? null : <span role="status">{filed}</span>}
      </div>
      {result === undefined ? null : (
        <div
          className="dashboard-grid"
          aria-busy={running}
          onDragOver={editing ? (e) => e.preventDefault() : undefined}
          onDrop={editing ? drop : undefined}
        >
          {result.tiles.map((tile) => (
            <TileView
              key={tile.index}
              tile={draftOf(tile)}
              edit={editing ? { rename: (title) => change(tile, { title }), move: (by) => move(tile, by) } : undefined}
            />
          ))}
        </div>
      )}
    </main>
  )
}

const nudges: ReadonlyArray<readonly [string, string, Partial<Layout>]> = [
  ["←", "Move left", { x: -1 }],
  ["→", "Move right", { x: 1 }],
  ["↑", "Move up", { y: -1 }],
  ["↓", "Move down", { y: 1 }],
  ["+W", "Wider", { w: 1 }],
  ["−W", "Narrower", { w: -1 }],
  ["+H", "Taller", { h: 1 }],
  ["−H", "Shorter", { h: -1 }]
]

function TileView({ edit, tile }: {
  readonly tile: Tile
  readonly edit?: { readonly rename: (title: string) => void; readonly move: (by: Partial<Layout>) => void } | undefined
}) {
  const place = {
    gridColumn: `${tile.layout.x + 1} / span ${tile.layout.w}`,
    gridRow: `${tile.layout.y + 1} / span ${tile.layout.h}`
  }
  return (
    <section
      className={`card tile${edit === undefined ? "" : " editing"}`}
      style={place}
      aria-label={`Tile ${tile.title}`}
      title={tile.reading?.text}
      draggable={edit !== undefined}
      onDragStart={(e) => e.dataTransfer.setData("text/plain", String(tile.index))}
    >
      {edit === undefined ? null : (
        <div className="tile-edit" role="group" aria-label={`Edit tile ${tile.index + 1}`}>
          <label className="field">
            <span>Title</span>
            <input value={tile.title} onChange={(e) => edit.rename(e.target.value)} />
          </label>
          {nudges.map(([label, name, by]) => (
            <button
              key={name}
              type="button"
              aria-label={name}
              title={name}
              onClick={() => edit.move(by)}
            >
              {label}
            </button>
          ))}
        </div>
      )}
      <header className="tile-head">
        <h2>{tile.title}</h2>
        {tile.trusted === undefined ?
          null :
          (
            <span className="badge trusted" title={`${tile.trusted.path} at ${tile.trusted.commit.slice(0, 12)}`}>
              Trusted
            </span>
          )}
      </header>
      {tile.reading === undefined ? null : <p className="reading">{tile.reading.text}</p>}
      {tile.status === "failed" ? <p className="error">{tile.error}</p> : tile.figure !== undefined
        ? (
          <p className="figure">
            <span className="figure-value">
              {figureText(tile.figure.value, tile.figure.format)}
              {tile.figure.unit === undefined || tile.figure.format === "percent" || tile.figure.value === null
                ? null
                : <span className="figure-unit">{tile.figure.unit}</span>}
            </span>
            {tile.figure.previous?.change === undefined ?
              null :
              (
                <span className={`figure-change ${tile.figure.previous.change < 0 ? "fell" : "rose"}`}>
                  {tile.figure.previous.change < 0 ? "▼" : "▲"}{" "}
                  {figureText(Math.abs(tile.figure.previous.change), "percent")} on {tile.figure.previous.start} to{" "}
                  {tile.figure.previous.end}
                </span>
              )}
          </p>
        )
        : tile.chart !== undefined
        ? <Chart spec={JSON.stringify(tile.chart)} title={tile.title} />
        : <Table content={JSON.stringify({ columns: tile.columns, rows: tile.rows })} name={tile.title} />}
      {edit !== undefined ?
        null :
        <a className="open-in-chat" href={`#/chats?ask=${encodeURIComponent(tile.title)}`}>Open in chat</a>}
    </section>
  )
}
