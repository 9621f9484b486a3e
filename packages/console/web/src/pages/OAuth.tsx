import { useCallback, useEffect, useRef, useState } from "react"
import { json } from "../api.js"

interface Consent {
  readonly client_id: string
  readonly client_name: string
  readonly redirect_uri: string
  readonly scopes: ReadonlyArray<string>
}

// What each scope lets an agent do, in the member's words (`@sightline/core` `OAuth.Scope`).
const scopeText: Record<string, string> = {
  read: "see the connectors, their metrics and tables, the Context Library and the playbooks",
  query: "run metric queries, verified queries and read-only SQL",
  ask: "ask Sightline's analyst questions",
  playbooks: "run your playbooks"
}

/**
 * The consent page of an agent's OAuth request (`/oauth/authorize` sends the browser here with the
 * request in the URL): it names the client and what it asks for, and the member approves or refuses.
 * The client's name is shown as text only, and the page sends the browser on only to a redirect URI
 * the server checked against the client's registration.
 */
export function ConsentPage({ query }: { readonly query: string }) {
  const [consent, setConsent] = useState<Consent>()
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const [granted, setGranted] = useState<ReadonlySet<string>>(new Set())
  const params = Object.fromEntries(new URLSearchParams(query))

  // The scopes last offered: the same consent read again (the effect can run twice) keeps what
  // the member has unchecked meanwhile, instead of checking every scope again.
  const offered = useRef<string>(undefined)
  useEffect(() => {
    void json<Consent>(`v2/oauth/consent?${new URLSearchParams(params).toString()}`)
      .then((found) => {
        setConsent(found)
        const scopes = found.scopes.join(" ")
        if (offered.current !== scopes) {
          offered.current = scopes
          setGranted(new Set(found.scopes))
        }
      })
      .catch((e) => setError(e.message))
  }, [query])

  const decide = useCallback(async (approve: boolean) => {
    setBusy(true)
    setError(undefined)
    try {
      const { redirect_to } = await json<{ redirect_to: string }>("v2/oauth/consent", {
        method: "POST",
        body: { ...params, approve, ...(approve ? { granted_scopes: [...granted] } : {}) }
      })
      window.location.assign(redirect_to)
    } catch (e) {
      setError((e as Error).message)
      setBusy(false)
    }
  }, [query, granted])

  // From the current set, not this render's: two changes before a render must both count.
  const toggle = (scope: string, on: boolean) =>
    setGranted((current) => {
      const next = new Set(current)
      if (on) next.add(scope)
      else next.delete(scope)
      return next
    })

  return (
    <main className="page consent" aria-labelledby="consent-title">
      <h1 id="consent-title">Connect an agent</h1>
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      {consent === undefined ? (error === undefined ? <p className="muted">Loading…</p> : null) : (
        <>
          <p>
            <strong>{consent.client_name}</strong>{" "}
            wants to use Sightline as you, with your roles and access. It will be able to:
          </p>
          <fieldset>
            <legend>What it asks for (uncheck what it should not do)</legend>
            {consent.scopes.map((scope) => (
              <label key={scope} className="check">
                <input
                  type="checkbox"
                  checked={granted.has(scope)}
                  onChange={(e) => toggle(scope, e.target.checked)}
                />{" "}
                {scopeText[scope] ?? scope}
              </label>
            ))}
          </fieldset>
          <p className="small muted">
            It returns to{" "}
            {new URL(consent.redirect_uri).host || consent.redirect_uri}. An administrator can disconnect it at any
            time.
          </p>
          <div className="actions">
            <button type="button" disabled={busy || granted.size === 0} onClick={() => void decide(true)}>
              Allow
            </button>
            <button type="button" className="secondary" disabled={busy} onClick={() => void decide(false)}>
              Deny
            </button>
          </div>
        </>
      )}
    </main>
  )
}

interface Grant {
  readonly id: string
  readonly client_id: string
  readonly client_name: string
  readonly member_id: string
  readonly scopes: ReadonlyArray<string>
  readonly created_at: string
  readonly last_used_at: string
}

/** The agents connected with OAuth, for admins, each with a button that disconnects its client. */
export function ConnectedAgents() {
  const [grants, setGrants] = useState<ReadonlyArray<Grant>>([])
  const [error, setError] = useState<string>()
  const load = useCallback(async () => {
    setGrants((await json<{ grants: Array<Grant> }>("v2/oauth/grants")).grants)
  }, [])
  useEffect(() => {
    void load().catch((e) => setError(e.message))
  }, [load])
  const disconnect = async (clientId: string) => {
    setError(undefined)
    try {
      await json(`v2/oauth/clients/${encodeURIComponent(clientId)}`, { method: "DELETE" })
      await load()
    } catch (e) {
      setError((e as Error).message)
    }
  }
  return (
    <section aria-labelledby="agents-title">
      <h2 id="agents-title">Connected agents</h2>
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      {grants.length === 0 ?
        <p className="muted">No agent is connected with a member's sign-in.</p> :
        (
          <div className="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Member</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Last used</th>
                  <th scope="col"></th>
                </tr>
              </thead>
              <tbody>
                {grants.map((grant) => (
                  <tr key={grant.id}>
                    <td>{grant.client_name}</td>
                    <td className="small">{grant.member_id}</td>
                    <td>{grant.scopes.join(", ")}</td>
                    <td>{grant.last_used_at.slice(0, 19).replace("T", " ")}</td>
                    <td>
                      <button type="button" className="secondary" onClick={() => void disconnect(grant.client_id)}>
                        Disconnect {grant.client_name}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
    </section>
  )
}

/** The organization's switch for agents' own SQL (`mcp_run_sql`). */
export function AgentSettings() {
  const [runSql, setRunSql] = useState<boolean>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    void json<{ mcp_run_sql: boolean }>("v2/organization/settings")
      .then((s) => setRunSql(s.mcp_run_sql))
      .catch((e) => setError(e.message))
  }, [])
  const change = async (value: boolean) => {
    setError(undefined)
    try {
      setRunSql(
        (await json<{ mcp_run_sql: boolean }>("v2/organization/settings", {
          method: "PATCH",
          body: { mcp_run_sql: value }
        })).mcp_run_sql
      )
    } catch (e) {
      setError((e as Error).message)
    }
  }
  return (
    <section aria-labelledby="agent-settings-title">
      <h2 id="agent-settings-title">Agents (MCP)</h2>
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      {runSql === undefined ? null : (
        <label>
          <input type="checkbox" checked={runSql} onChange={(e) => void change(e.target.checked)} />{" "}
          Agents may run SQL of their own (run_sql)
        </label>
      )}
    </section>
  )
}
