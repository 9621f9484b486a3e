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
}

export function ChangesPage() {
  const [changes, setChanges] = useState<ReadonlyArray<Change>>([])
  const [error, setError] = useState<string>()
  const load = useCallback(async () => {
    setChanges((await json<{ changes: Array<Change> }>("v2/changes?page_size=50")).changes)
  }, [])
  useEffect(() => {
    void load().catch((e) => setError(e.message))
  }, [load])
  const review = (change: Change, verdict: "approve" | "deny") => async () => {
    setError(undefined)
    try {
      // The reviewed ref: a revision filed after this page loaded makes the review fail instead of
      // approving something nobody read.
      await json(`v2/changes/${change.id}/${verdict}`, { method: "POST", body: { expected_git_ref: change.git_ref } })
      await load()
    } catch (e) {
      setError((e as Error).message)
    }
  }
  return (
    <main className="page" aria-labelledby="changes-title">
      <h1 id="changes-title">Library changes</h1>
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
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
          </summary>
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
