import { type FormEvent, useCallback, useEffect, useState } from "react"
import { json } from "../api.js"
import { CheckSet } from "../components/CheckSet.js"
import { Secret } from "../components/Secret.js"
import { AgentSettings, ConnectedAgents } from "./OAuth.js"

interface Member {
  readonly id: string
  readonly email: string
  readonly name: string
  readonly roles: ReadonlyArray<string>
  readonly is_service_account: boolean
}

interface Role {
  readonly id: string
  readonly name: string
  readonly permissions?: ReadonlyArray<string>
  readonly is_system: boolean
  readonly default_model_id?: number
  readonly allowed_model_ids?: ReadonlyArray<number>
  readonly allow_model_choice?: boolean
}

interface AuditEntry {
  readonly id: string
  readonly actor_id?: string
  readonly action: string
  readonly resource_type: string
  readonly resource_id: string
  readonly auth_method: string
  readonly created_at: string
}

function Members() {
  const [members, setMembers] = useState<ReadonlyArray<Member>>([])
  const [email, setEmail] = useState("")
  const [role, setRole] = useState("member")
  // A link to pass on, or (where the server sends e-mail, which then keeps the link to the member) a notice.
  const [link, setLink] = useState<{ label: string; url?: string | undefined }>()
  const [error, setError] = useState<string>()
  const load = useCallback(async () => setMembers((await json<{ members: Array<Member> }>("v2/members")).members), [])
  useEffect(() => {
    void load().catch((e) => setError(e.message))
  }, [load])
  const attempt = async (f: () => Promise<void>) => {
    setError(undefined)
    try {
      await f()
      await load()
    } catch (e) {
      setError((e as Error).message)
    }
  }
  const invite = (event: FormEvent) => {
    event.preventDefault()
    void attempt(async () => {
      const invited = await json<{ sign_in_url?: string; sign_in_emailed: boolean }>("v2/members/invite", {
        method: "POST",
        body: { email, role }
      })
      setLink(
        invited.sign_in_url === undefined
          ? {
            label: `${email} was invited: the link to set a password was e-mailed to them${
              invited.sign_in_emailed ? "" : ", but the mail server did not take it; try a reset link"
            }.`
          }
          : { label: `Send ${email} this one-time link to set a password:`, url: invited.sign_in_url }
      )
      setEmail("")
    })
  }
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <form className="card inline-form" onSubmit={invite} aria-label="Invite a member">
        <label className="field">
          <span>E-mail address</span>
          <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label className="field">
          <span>Role</span>
          <select value={role} onChange={(e) => setRole(e.target.value)}>
            <option value="member">member</option>
            <option value="admin">admin</option>
          </select>
        </label>
        <button type="submit" className="primary">Invite</button>
      </form>
      {link === undefined
        ? null
        : link.url === undefined
        ? <p role="status">{link.label}</p>
        : <Secret label={link.label} value={link.url} />}
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Roles</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.id}>
                <td>{m.email}{m.is_service_account ? " (service account)" : ""}</td>
                <td>{m.roles.join(", ")}</td>
                <td className="actions">
                  {m.is_service_account ? null : (
                    <button
                      type="button"
                      onClick={() =>
                        void attempt(async () => {
                          const issued = await json<{ url?: string; emailed: boolean }>(
                            `v2/members/${m.id}/sign-in-link`,
                            { method: "POST", body: { purpose: "reset" } }
                          )
                          setLink(
                            issued.url === undefined
                              ? {
                                label: issued.emailed
                                  ? `A password reset link was e-mailed to ${m.email}.`
                                  : `The reset link for ${m.email} could not be e-mailed: the mail server did not take it.`
                              }
                              : { label: `A password reset link for ${m.email}:`, url: issued.url }
                          )
                        })}
                    >
                      Reset link
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}

function RoleModels(
  { models, onSaved, role }: {
    readonly role: Role
    readonly models: ReadonlyArray<{ id: string; number: number }>
    readonly onSaved: () => void
  }
) {
  const [defaultModel, setDefaultModel] = useState(
    role.default_model_id === undefined ? "" : String(role.default_model_id)
  )
  const [allowed, setAllowed] = useState<ReadonlySet<number>>(new Set(role.allowed_model_ids ?? []))
  const [choice, setChoice] = useState(role.allow_model_choice === true)
  const [message, setMessage] = useState<string>()
  const save = async (event: FormEvent) => {
    event.preventDefault()
    try {
      await json(`v2/roles/${role.id}`, {
        method: "PATCH",
        body: {
          ...(defaultModel === "" ? {} : { default_model_id: Number(defaultModel) }),
          // The API takes a non-empty list; none checked leaves the allowed models as they are.
          ...(allowed.size === 0 ? {} : { allowed_model_ids: [...allowed] }),
          allow_model_choice: choice
        }
      })
      setMessage("Saved.")
      onSaved()
    } catch (e) {
      setMessage((e as Error).message)
    }
  }
  return (
    <details>
      <summary>Models of {role.name}</summary>
      <form className="form-grid" onSubmit={save} aria-label={`Models of ${role.name}`}>
        <label className="field">
          <span>Default model</span>
          <select value={defaultModel} onChange={(e) => setDefaultModel(e.target.value)}>
            <option value="">the organization's default</option>
            {models.map((m) => <option key={m.number} value={m.number}>{m.id} ({m.number})</option>)}
          </select>
        </label>
        <CheckSet
          legend="Allowed models"
          items={models.map((m) => ({ key: m.number, label: m.id }))}
          selected={allowed}
          onChange={setAllowed}
        />
        <label className="check">
          <input type="checkbox" checked={choice} onChange={(e) => setChoice(e.target.checked)} />
          Members with this role may choose the model
        </label>
        <button type="submit">Save models</button>
        {message === undefined ? null : <p role="status">{message}</p>}
      </form>
    </details>
  )
}

function Roles() {
  const [roles, setRoles] = useState<ReadonlyArray<Role>>([])
  const [models, setModels] = useState<ReadonlyArray<{ id: string; number: number }>>([])
  const [error, setError] = useState<string>()
  const load = useCallback(
    () => json<{ roles: Array<Role> }>("v2/roles").then((r) => setRoles(r.roles)).catch((e) => setError(e.message)),
    []
  )
  useEffect(() => {
    void load()
    void json<{ models: Array<{ id: string; number: number }> }>("v2/models").then((m) => setModels(m.models))
      .catch(() => setModels([]))
  }, [load])
  return (
    <section aria-labelledby="roles-title">
      <h2 id="roles-title">Roles and their models</h2>
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Role</th>
              <th scope="col">Permissions</th>
              <th scope="col">Models</th>
            </tr>
          </thead>
          <tbody>
            {roles.map((r) => (
              <tr key={r.id}>
                <td>{r.name}{r.is_system ? " (system)" : ""}</td>
                <td className="small">{(r.permissions ?? []).join(", ")}</td>
                <td className="small">
                  default {r.default_model_id ?? "organization's"}; allowed{" "}
                  {(r.allowed_model_ids ?? []).length === 0 ? "all" : (r.allowed_model_ids ?? []).join(", ")}
                  {r.allow_model_choice === true ? "; may choose" : ""}
                  <RoleModels role={r} models={models} onSaved={() => void load()} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}

function AuditLog() {
  const [entries, setEntries] = useState<ReadonlyArray<AuditEntry>>([])
  const [error, setError] = useState<string>()
  useEffect(() => {
    void json<{ entries: Array<AuditEntry> }>("v2/audit-logs")
      .then((r) => setEntries(r.entries))
      .catch((e) => setError(e.message))
  }, [])
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Resource</th>
              <th scope="col">By</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id}>
                <td>{e.created_at.slice(0, 19).replace("T", " ")}</td>
                <td>{e.action}</td>
                <td className="small">{e.resource_type} {e.resource_id}</td>
                <td className="small">{e.actor_id ?? "system"} ({e.auth_method})</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}

export function AdminPage() {
  return (
    <main className="page" aria-labelledby="admin-title">
      <h1 id="admin-title">Administration</h1>
      <Members />
      <Roles />
      <AgentSettings />
      <ConnectedAgents />
      <AuditLog />
    </main>
  )
}
