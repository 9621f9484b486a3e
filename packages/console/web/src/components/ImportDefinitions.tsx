import { type FormEvent, useState } from "react"
import { json } from "../api.js"

interface ReportLine {
  readonly file: string
  readonly line?: number
  readonly construct: string
  readonly name: string
  readonly outcome: "imported" | "approximated" | "refused"
  readonly note?: string
}

interface Imported {
  readonly path: string
  readonly report: ReadonlyArray<ReportLine>
  readonly tally: { readonly imported: number; readonly approximated: number; readonly refused: number }
  readonly change?: { readonly change_number: number; readonly status: string }
}

const formats = [
  { value: "dbt", label: "dbt MetricFlow" },
  { value: "cube", label: "Cube" },
  { value: "lookml", label: "LookML" },
  { value: "osi", label: "Open Semantic Interchange (OSI)" }
] as const

/**
 * A dbt, Cube, LookML or OSI project imported into a connector's semantic model: the files (or one
 * zip) are dropped, the report of every construct is shown, and the model is then filed as a library
 * change, whose checks run every imported metric before anyone merges it.
 */
export function ImportDefinitions(
  { connector }: { readonly connector: { readonly id: number; readonly name: string } }
) {
  const [format, setFormat] = useState<(typeof formats)[number]["value"]>("dbt")
  const [files, setFiles] = useState<ReadonlyArray<File>>([])
  const [schema, setSchema] = useState("")
  const [name, setName] = useState("")
  const [result, setResult] = useState<Imported>()
  const [status, setStatus] = useState<string>()
  const [busy, setBusy] = useState(false)
  // A preview belongs to the files and settings it was made from: changing them asks for a new one.
  const reset = () => {
    setResult(undefined)
    setStatus(undefined)
  }
  function edit<A>(set: (value: A) => void) {
    return (value: A) => {
      reset()
      set(value)
    }
  }
  const send = async (fileChange: boolean) => {
    if (files.length === 0) return setStatus("Choose or drop the project's files, or one zip of it, first.")
    const form = new FormData()
    form.set("format", format)
    form.set("connector_id", String(connector.id))
    if (name.trim() !== "") form.set("name", name.trim())
    if (schema.trim() !== "") form.set("schema", schema.trim())
    form.set("file_change", String(fileChange))
    for (const file of files) form.append("files", file, file.webkitRelativePath || file.name)
    setBusy(true)
    setStatus(fileChange ? "Filing the change…" : "Reading the definitions…")
    try {
      const imported = await json<Imported>("v2/semantic/import", { method: "POST", body: form })
      setResult(imported)
      setStatus(
        imported.change === undefined
          ? undefined
          : `Change #${imported.change.change_number} filed (${imported.change.status}): its checks run every imported metric on ${connector.name}.`
      )
    } catch (e) {
      setResult(undefined)
      setStatus((e as Error).message)
    } finally {
      setBusy(false)
    }
  }
  const preview = (event: FormEvent) => {
    event.preventDefault()
    void send(false)
  }
  return (
    <form
      className="card form-grid drop"
      onSubmit={preview}
      aria-label={`Import definitions into ${connector.name}`}
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        e.preventDefault()
        edit(setFiles)([...files, ...Array.from(e.dataTransfer.files)])
      }}
    >
      <h2>Import definitions</h2>
      <p className="muted">
        Metrics already defined in dbt, Cube, LookML or OSI: drop the project's files or one zip of it. The report lists
        every construct as imported, approximated or refused.
      </p>
      <label className="field">
        <span>Format</span>
        <select
          value={format}
          onChange={(e) => edit(setFormat)(e.target.value as typeof format)}
        >
          {formats.map((f) => <option key={f.value} value={f.value}>{f.label}</option>)}
        </select>
      </label>
      <label className="field">
        <span>Definition files</span>
        <input
          type="file"
          multiple
          aria-label="Definition files"
          accept=".yml,.yaml,.json,.js,.cjs,.mjs,.lkml,.lookml,.zip"
          onChange={(e) => edit(setFiles)([...files, ...Array.from(e.target.files ?? [])])}
        />
      </label>
      {files.length === 0 ? null : (
        <p>
          {files.map((f) => f.name).join(", ")}{" "}
          <button
            type="button"
            className="link"
            onClick={() => edit(setFiles)([])}
          >
            Clear
          </button>
        </p>
      )}
      <label className="field">
        <span>Model name</span>
        <input
          value={name}
          onChange={(e) => edit(setName)(e.target.value)}
          placeholder="The project's"
        />
      </label>
      <label className="field">
        <span>Schema</span>
        <input
          value={schema}
          onChange={(e) => edit(setSchema)(e.target.value)}
          placeholder="The one the definitions name"
        />
      </label>
      <div className="actions">
        <button type="submit" disabled={busy}>Preview the import</button>
        <button
          type="button"
          className="primary"
          disabled={busy || result === undefined || result.change !== undefined}
          onClick={() => void send(true)}
        >
          File the change
        </button>
      </div>
      {status === undefined ? null : (
        <p role="status">
          {status}
          {result?.change === undefined ? null : (
            <>
              {" "}
              <a href="#/changes">Review it in Changes</a>
            </>
          )}
        </p>
      )}
      {result === undefined ? null : <Report result={result} />}
    </form>
  )
}

/** The report: what became of every construct, refused ones first. */
function Report({ result }: { readonly result: Imported }) {
  const { tally } = result
  const rank = { refused: 0, approximated: 1, imported: 2 } as const
  // In the source's order within each outcome: what needs a reviewer's eye comes first.
  const lines = [...result.report].sort((a, b) => rank[a.outcome] - rank[b.outcome])
  return (
    <section aria-label="Import report">
      <h3>
        {result.path}: {tally.imported} imported, {tally.approximated} approximated, {tally.refused} refused
      </h3>
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th>Outcome</th>
              <th>Construct</th>
              <th>Name</th>
              <th>Where</th>
              <th>Note</th>
            </tr>
          </thead>
          <tbody>
            {lines.map((line, i) => (
              <tr key={i}>
                <td>
                  <span
                    className={`badge${
                      line.outcome === "refused" ? " danger" : line.outcome === "imported" ? " trusted" : ""
                    }`}
                  >
                    {line.outcome}
                  </span>
                </td>
                <td>{line.construct}</td>
                <td>{line.name}</td>
                <td>{line.line === undefined ? line.file : `${line.file}:${line.line}`}</td>
                <td>{line.note ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}
