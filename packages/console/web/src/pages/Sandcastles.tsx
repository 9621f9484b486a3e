import { useEffect, useState } from "react"
import { json } from "../api.js"

interface Sandbox {
  readonly sandbox_id: string
  readonly status: string
  readonly chat_id?: string
  readonly started_at: string
  readonly released_at?: string
}

interface Execution {
  readonly id: string
  readonly kind: string
  readonly source: string
  readonly input: string
  readonly output_preview?: string
  readonly error?: string
  readonly duration_ms?: number
  readonly created_at: string
}

function Executions({ sandboxId }: { readonly sandboxId: string }) {
  const [executions, setExecutions] = useState<ReadonlyArray<Execution>>([])
  const [error, setError] = useState<string>()
  useEffect(() => {
    void json<{ executions: Array<Execution> }>(`v2/sandcastles/${sandboxId}/executions?limit=100`)
      .then((r) => setExecutions(r.executions))
      .catch((e) => setError(e.message))
  }, [sandboxId])
  if (error !== undefined) return <p className="error" role="alert">{error}</p>
  if (executions.length === 0) return <p className="muted">No executions.</p>
  return (
    <ol className="timeline">
      {executions.map((x) => (
        <li key={x.id} className={`cell ${x.error === undefined ? "" : "cell-failed"}`}>
          <header className="cell-head">
            <span className="badge">{x.kind}</span>
            <span className="cell-status">
              {x.source} · {x.created_at.slice(0, 19).replace("T", " ")}
              {x.duration_ms === undefined ? "" : ` · ${x.duration_ms} ms`}
            </span>
          </header>
          <details className="source">
            <summary>Input</summary>
            <pre><code>{x.input}</code></pre>
          </details>
          {x.output_preview === undefined || x.output_preview === ""
            ? null
            : <pre className="answer-text">{x.output_preview}</pre>}
          {x.error === undefined ? null : <p className="error">{x.error}</p>}
        </li>
      ))}
    </ol>
  )
}

/** The caller's sandcastles and what ran in each. */
export function SandcastlesPage() {
  const [sandboxes, setSandboxes] = useState<ReadonlyArray<Sandbox>>([])
  const [open, setOpen] = useState<string>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    void json<{ sandboxes: Array<Sandbox> }>("v2/sandcastles?status=all&limit=100")
      .then((r) => setSandboxes(r.sandboxes))
      .catch((e) => setError(e.message))
  }, [])
  return (
    <main className="page" aria-labelledby="sandcastles-title">
      <h1 id="sandcastles-title">Sandcastles</h1>
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      {sandboxes.length === 0 && error === undefined ? <p className="muted">No sandboxes yet.</p> : null}
      <ul className="list">
        {sandboxes.map((s) => (
          <li key={s.sandbox_id}>
            <button
              type="button"
              className="link"
              aria-expanded={open === s.sandbox_id}
              onClick={() => setOpen(open === s.sandbox_id ? undefined : s.sandbox_id)}
            >
              {s.started_at.slice(0, 16).replace("T", " ")} · {s.sandbox_id.slice(0, 8)}
            </button>
            <span className="badge">{s.status}</span>
          </li>
        ))}
      </ul>
      {open === undefined ? null : <Executions key={open} sandboxId={open} />}
    </main>
  )
}
