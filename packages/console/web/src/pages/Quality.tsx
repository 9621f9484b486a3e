import { type FormEvent, useCallback, useEffect, useState } from "react"
import { json } from "../api.js"
import { Markdown } from "../components/Markdown.js"

interface CaseResult {
  readonly question: string
  readonly passed: boolean
  readonly sql?: string
  readonly difference?: string
  readonly error?: string
}

interface Run {
  readonly id: string
  readonly set: string
  readonly connector_id: number
  readonly model: string
  readonly status: string
  readonly change_id?: string
  readonly cases_total: number
  readonly passed: number
  readonly failed: number
  readonly accuracy?: number
  readonly regressions?: ReadonlyArray<string>
  readonly error?: string
  readonly results: ReadonlyArray<CaseResult>
  readonly created_at: string
}

interface Comparison {
  readonly left: { readonly model: string; readonly accuracy?: number }
  readonly right: { readonly model: string; readonly accuracy?: number }
  readonly cases: ReadonlyArray<{ readonly question: string; readonly left?: boolean; readonly right?: boolean }>
}

interface Rating {
  readonly id: string
  readonly rating: string
  readonly comment?: string
  readonly question: string
  readonly answer: string
  readonly model: string
  readonly sql?: string
  readonly connector_id?: number
  readonly created_at: string
}

const percent = (accuracy: number | undefined) => (accuracy === undefined ? "–" : `${Math.round(accuracy * 100)}%`)
const outcome = (passed: boolean | undefined) => (passed === undefined ? "–" : passed ? "passed" : "failed")

/** Evaluation runs: start one, follow it, read its failures with their differences, compare two. */
function Evaluations() {
  const [runs, setRuns] = useState<ReadonlyArray<Run>>([])
  const [connectors, setConnectors] = useState<ReadonlyArray<{ readonly id: number; readonly name: string }>>([])
  const [models, setModels] = useState<ReadonlyArray<{ readonly id: string; readonly default: boolean }>>([])
  const [set, setSet] = useState("semantic/demo.yaml")
  const [connector, setConnector] = useState("")
  const [model, setModel] = useState("")
  const [picked, setPicked] = useState<ReadonlyArray<string>>([])
  const [comparison, setComparison] = useState<Comparison>()
  const [error, setError] = useState<string>()
  const load = useCallback(async () => setRuns((await json<{ runs: Array<Run> }>("v2/evals/runs?limit=20")).runs), [])
  useEffect(() => {
    void load().catch((e) => setError(e.message))
    void json<Array<{ id: number; name: string }>>("v2/connectors").then((list) => {
      setConnectors(list)
      if (list[0] !== undefined) setConnector(String(list[0].id))
    }).catch(() => setConnectors([]))
    void json<{ models: Array<{ id: string; default: boolean }> }>("v2/models").then((m) => setModels(m.models))
      .catch(() => setModels([]))
  }, [load])
  // A run moves on the worker: look again while one is unfinished.
  const unfinished = runs.some((run) => run.status === "queued" || run.status === "running")
  useEffect(() => {
    if (!unfinished) return
    const timer = setInterval(() => void load().catch(() => undefined), 1000)
    return () => clearInterval(timer)
  }, [unfinished, load])
  const start = async (event: FormEvent) => {
    event.preventDefault()
    setError(undefined)
    try {
      await json("v2/evals/runs", {
        method: "POST",
        body: { set, connector_id: Number(connector), ...(model === "" ? {} : { model }) }
      })
      await load()
    } catch (e) {
      setError((e as Error).message)
    }
  }
  const toggle = (id: string) =>
    setPicked((now) => (now.includes(id) ? now.filter((p) => p !== id) : [...now, id].slice(-2)))
  const compare = async () => {
    setError(undefined)
    try {
      setComparison(await json<Comparison>(`v2/evals/compare?left=${picked[0]}&right=${picked[1]}`))
    } catch (e) {
      setError((e as Error).message)
    }
  }
  return (
    <section className="card" aria-labelledby="evals-title">
      <h2 id="evals-title">Evaluation runs</h2>
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      <form className="inline-form" onSubmit={start}>
        <label className="field">
          <span>Set</span>
          <input value={set} onChange={(e) => setSet(e.target.value)} />
        </label>
        <label className="field">
          <span>Connector</span>
          <select value={connector} onChange={(e) => setConnector(e.target.value)}>
            {connectors.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
          </select>
        </label>
        <label className="field">
          <span>Model</span>
          <select value={model} onChange={(e) => setModel(e.target.value)}>
            <option value="">default</option>
            {models.map((m) => <option key={m.id} value={m.id}>{m.id}</option>)}
          </select>
        </label>
        {/* Until the connectors are read there is nothing to run on: a run sent then would name connector 0. */}
        <button type="submit" className="primary" disabled={connector === ""}>Run</button>
      </form>
      {runs.length === 0 ? <p className="muted">No runs yet.</p> : null}
      {runs.map((run) => (
        <div key={run.id} className="run-row">
          <input
            type="checkbox"
            aria-label={`Compare run ${run.id}`}
            checked={picked.includes(run.id)}
            onChange={() => toggle(run.id)}
          />
          <details className="run">
            <summary>
              {run.set} with {run.model}{" "}
              <span className={`badge ${run.status === "failed" ? "danger" : ""}`}>{run.status}</span>{" "}
              <span className="muted">
                {run.passed}/{run.cases_total} passed, accuracy {percent(run.accuracy)}
                {run.change_id === undefined ? "" : " (a change's check)"}
              </span>
              {(run.regressions ?? []).length === 0 ?
                null :
                <span className="badge danger">{run.regressions!.length} regressions</span>}
            </summary>
            {run.error === undefined ? null : <p className="error">{run.error}</p>}
            <div className="table-scroll">
              <table aria-label={`Cases of run ${run.id}`}>
                <thead>
                  <tr>
                    <th scope="col">Question</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Difference</th>
                  </tr>
                </thead>
                <tbody>
                  {run.results.map((result, i) => (
                    <tr key={i}>
                      <td>{result.question}</td>
                      <td>{outcome(result.passed)}</td>
                      <td>{result.difference ?? result.error ?? ""}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </details>
        </div>
      ))}
      <div className="actions">
        <button type="button" disabled={picked.length !== 2} onClick={() => void compare()}>
          Compare the two runs picked
        </button>
      </div>
      {comparison === undefined ? null : (
        <div className="table-scroll">
          <table aria-label="Comparison">
            <thead>
              <tr>
                <th scope="col">Question</th>
                <th scope="col">{comparison.left.model} ({percent(comparison.left.accuracy)})</th>
                <th scope="col">{comparison.right.model} ({percent(comparison.right.accuracy)})</th>
              </tr>
            </thead>
            <tbody>
              {comparison.cases.map((c) => (
                <tr key={c.question}>
                  <td>{c.question}</td>
                  <td>{outcome(c.left)}</td>
                  <td>{outcome(c.right)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

/** Ratings of answers, and promoting one into a verified query or an evaluation case (a library change). */
function Feedback() {
  const [ratings, setRatings] = useState<ReadonlyArray<Rating>>([])
  const [filter, setFilter] = useState("")
  const [notice, setNotice] = useState<string>()
  const [error, setError] = useState<string>()
  const load = useCallback(async (rating: string) =>
    setRatings(
      (await json<{ feedback: Array<Rating> }>(`v2/feedback?limit=50${rating === "" ? "" : `&rating=${rating}`}`))
        .feedback
    ), [])
  useEffect(() => {
    void load(filter).catch((e) => setError(e.message))
  }, [load, filter])
  const promote = async (rating: Rating, body: Record<string, string>) => {
    setError(undefined)
    setNotice(undefined)
    try {
      const filed = await json<{ change_id: string; path: string }>(`v2/feedback/${rating.id}/promote`, {
        method: "POST",
        body
      })
      setNotice(`Filed a change to ${filed.path}: review it under Changes.`)
    } catch (e) {
      setError((e as Error).message)
    }
  }
  const verify = (rating: Rating) => (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    void promote(rating, {
      as: "verified_query",
      name: String(form.get("name")),
      question: rating.question,
      sql: String(form.get("sql"))
    })
  }
  return (
    <section className="card" aria-labelledby="feedback-title">
      <h2 id="feedback-title">Feedback</h2>
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      {notice === undefined ? null : <p className="notice" role="status">{notice}</p>}
      <label className="field">
        <span>Rating</span>
        <select value={filter} onChange={(e) => setFilter(e.target.value)}>
          <option value="">all</option>
          <option value="up">up</option>
          <option value="down">down</option>
        </select>
      </label>
      {ratings.length === 0 ? <p className="muted">No ratings.</p> : null}
      {ratings.map((rating) => (
        <details key={rating.id} className="rating">
          <summary>
            <span className={`badge ${rating.rating === "down" ? "danger" : ""}`}>{rating.rating}</span>{" "}
            {rating.question} <span className="muted">({rating.model})</span>
          </summary>
          {rating.comment === undefined ? null : <p>“{rating.comment}”</p>}
          <Markdown text={rating.answer} />
          {rating.sql === undefined ? null : <pre className="diff"><code>{rating.sql}</code></pre>}
          {rating.rating !== "up" ? null : (
            <>
              <div className="actions">
                <button
                  type="button"
                  onClick={() => void promote(rating, { as: "eval_case" })}
                >
                  Make it an evaluation case
                </button>
              </div>
              <form className="inline-form" onSubmit={verify(rating)} aria-label={`Promote ${rating.id}`}>
                <label className="field">
                  <span>Verified query name</span>
                  <input name="name" required pattern="[a-z][a-z0-9_]*" />
                </label>
                <label className="field">
                  <span>SQL over the model's tables</span>
                  <textarea name="sql" required defaultValue={rating.sql ?? ""} rows={4} />
                </label>
                <button type="submit" className="primary">Promote to a verified query</button>
              </form>
            </>
          )}
        </details>
      ))}
    </section>
  )
}

export function QualityPage({ can }: { readonly can: (permission: string) => boolean }) {
  return (
    <main className="page" aria-labelledby="quality-title">
      <h1 id="quality-title">Answer quality</h1>
      {can("connector:write") ? <Evaluations /> : null}
      {can("organization:read") ? <Feedback /> : null}
    </main>
  )
}
