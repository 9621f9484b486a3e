import { useCallback, useEffect, useState } from "react"
import { json } from "../api.js"

interface Change {
  readonly id: string
  readonly number: number
  readonly title: string
  readonly status: string
  readonly git_ref: string
  readonly author_email?: string
  readonly approval_count: number
  readonly required_approvals: number
  readonly diffs?: ReadonlyArray<{ readonly path?: string; readonly diff?: string; readonly patch?: string }>
  readonly checks?: ReadonlyArray<
    { readonly name: string; readonly status: string; readonly messages: ReadonlyArray<string> }
  >
  readonly evaluation?: Evaluation
}

interface Evaluation {
  readonly revision: number
  readonly status: string
  readonly model?: string
  readonly required: boolean
  readonly messages: ReadonlyArray<string>
  readonly sets: ReadonlyArray<{
    readonly set: string
    readonly connector_id: number
    readonly run_id: string
    readonly main_run_id?: string
    readonly passed: number
    readonly failed: number
    readonly regressions: ReadonlyArray<string>
    readonly new_failures: ReadonlyArray<string>
    readonly error?: string
  }>
}

/** The evaluation check of a change: each set's counts, and what the change made fail. */
function EvaluationView({ evaluation, number }: { readonly evaluation: Evaluation; readonly number: number }) {
  return (
    <section className="evaluation" aria-label={`Evaluation of change ${number}`}>
      <p>
        <span className={`badge ${evaluation.status === "failed" ? "danger" : ""}`}>{evaluation.status}</span>{" "}
        Evaluation of revision {evaluation.revision}
        {evaluation.model === undefined ? "" : ` with ${evaluation.model}`}
        {evaluation.required ? ", required to merge" : ", for information"}
      </p>
      {evaluation.messages.length === 0 ? null : (
        <ul className="muted">
          {evaluation.messages.map((message) => <li key={message}>{message}</li>)}
        </ul>
      )}
      {evaluation.sets.length === 0 ? null : (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Set</th>
                <th scope="col">Connector</th>
                <th scope="col">Passed</th>
                <th scope="col">Failed</th>
                <th scope="col">Regressions against main</th>
                <th scope="col">New failures</th>
              </tr>
            </thead>
            <tbody>
              {evaluation.sets.map((set) => (
                <tr key={`${set.set}:${set.connector_id}`}>
                  <td>{set.set}</td>
                  <td>{set.connector_id}</td>
                  <td>{set.passed}</td>
                  <td>{set.failed}</td>
                  <td>{[...set.regressions, ...(set.error === undefined ? [] : [set.error])].join("; ")}</td>
                  <td>{set.new_failures.join("; ")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

export function ChangesPage() {
  const [changes, setChanges] = useState<ReadonlyArray<Change>>([])
  const [error, setError] = useState<string>()
  const [notice, setNotice] = useState<string>()
  const load = useCallback(async () => {
    setChanges((await json<{ changes: Array<Change> }>("v2/changes?page_size=50")).changes)
  }, [])
  useEffect(() => {
    void load().catch((e) => setError(e.message))
  }, [load])
  const review = (change: Change, verdict: "approve" | "deny") => async () => {
    setError(undefined)
    setNotice(undefined)
    try {
      // The reviewed ref: a revision filed after this page loaded makes the review fail instead of
      // approving something nobody read.
      const result = await json<{ blocked_by?: string }>(`v2/changes/${change.id}/${verdict}`, {
        method: "POST",
        body: { expected_git_ref: change.git_ref }
      })
      if (result.blocked_by !== undefined) {
        setNotice(`Change ${change.number} is approved but not merged: ${result.blocked_by}`)
      }
      await load()
    } catch (e) {
      setError((e as Error).message)
    }
  }
  return (
    <main className="page" aria-labelledby="changes-title">
      <h1 id="changes-title">Library changes</h1>
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      {notice === undefined ? null : <p className="notice" role="status">{notice}</p>}
      {changes.length === 0 ? <p className="muted">No changes.</p> : null}
      {changes.map((change) => (
        <details key={change.id} className="card">
          <summary>
            #{change.number} {change.title} <span className="badge">{change.status}</span>{" "}
            <span className="muted">{change.approval_count}/{change.required_approvals} approvals</span>
            {(change.checks ?? []).some((check) => check.status === "failed")
              ? (
                <>
                  <span className="badge danger">checks failed</span>
                </>
              )
              : null}
            {change.evaluation === undefined ?
              null :
              (
                <span className={`badge ${change.evaluation.status === "failed" ? "danger" : ""}`}>
                  evaluation {change.evaluation.status}
                </span>
              )}
          </summary>
          {change.evaluation === undefined ?
            null :
            <EvaluationView evaluation={change.evaluation} number={change.number} />}
          {(change.checks ?? []).length === 0 ?
            null :
            (
              <ul className="checks" aria-label={`Checks of change ${change.number}`}>
                {(change.checks ?? []).map((check) => (
                  <li key={check.name}>
                    <span className={`badge ${check.status === "failed" ? "danger" : ""}`}>{check.status}</span>{" "}
                    {check.name}
                    {check.messages.length === 0 ?
                      null :
                      <pre className="diff"><code>{check.messages.join("\n")}</code></pre>}
                  </li>
                ))}
              </ul>
            )}
          {(change.diffs ?? []).map((diff, i) => (
            <pre key={i} className="diff"><code>{diff.diff ?? diff.patch ?? JSON.stringify(diff, null, 2)}</code></pre>
          ))}
          {change.status === "open"
            ? (
              <div className="actions">
                <button type="button" className="primary" onClick={review(change, "approve")}>Approve</button>
                <button type="button" className="danger" onClick={review(change, "deny")}>Deny</button>
              </div>
            )
            : null}
        </details>
      ))}
    </main>
  )
}
