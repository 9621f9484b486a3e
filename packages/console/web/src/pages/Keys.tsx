import { type FormEvent, useCallback, useEffect, useState } from "react"
import { json } from "../api.js"
import { CheckSet } from "../components/CheckSet.js"
import { Secret } from "../components/Secret.js"

interface ApiKey {
  readonly id: string
  readonly name?: string
  readonly client_id?: string
  readonly assumed_roles: ReadonlyArray<string>
  readonly inherit_all_roles: boolean
  readonly status: string
  readonly created_at: string
  readonly expires_at?: string
}

interface Role {
  readonly id: string
  readonly name: string
}

export function KeysPage() {
  const [keys, setKeys] = useState<ReadonlyArray<ApiKey>>([])
  const [roles, setRoles] = useState<ReadonlyArray<Role>>([])
  const [name, setName] = useState("")
  const [clientId, setClientId] = useState("")
  const [days, setDays] = useState("30")
  const [scoped, setScoped] = useState<ReadonlySet<string>>(new Set())
  const [secret, setSecret] = useState<string>()
  const [error, setError] = useState<string>()

  const load = useCallback(async () => {
    setKeys((await json<{ api_keys: Array<ApiKey> }>("v2/api-keys")).api_keys)
  }, [])
  useEffect(() => {
    void load().catch((e) => setError(e.message))
    void json<{ roles: Array<Role> } | Array<Role>>("v2/roles")
      .then((r) => setRoles(Array.isArray(r) ? r : r.roles))
      .catch(() => setRoles([]))
  }, [load])

  const act = (f: () => Promise<unknown>) => async () => {
    setError(undefined)
    try {
      await f()
      await load()
    } catch (e) {
      setError((e as Error).message)
    }
  }

  const mint = async (event: FormEvent) => {
    event.preventDefault()
    await act(async () => {
      const created = await json<{ key: string }>("v2/api-keys", {
        method: "POST",
        body: {
          ...(name === "" ? {} : { name }),
          ...(clientId === "" ? {} : { clientId }),
          expirySeconds: Number(days) * 86400,
          ...(scoped.size === 0 ? { inheritAllRoles: true } : { assumedRoles: [...scoped] })
        }
      })
      setSecret(created.key)
      setName("")
    })()
  }

  return (
    <main className="page" aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <form className="card form-grid" onSubmit={mint} aria-label="Mint a personal key">
        <h2>Mint a personal key</h2>
        <label className="field">
          <span>Name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} />
        </label>
        <label className="field">
          <span>Client metadata for row-level security (a JSON object)</span>
          <input
            value={clientId}
            onChange={(e) => setClientId(e.target.value)}
            placeholder='{"tenant_id": "acme"}'
            spellCheck={false}
          />
        </label>
        <label className="field">
          <span>Expires after (days)</span>
          <input type="number" min={1} max={365} value={days} onChange={(e) => setDays(e.target.value)} />
        </label>
        <CheckSet
          legend="Roles (none checked: all of yours)"
          items={roles.map((role) => ({ key: role.id, label: role.name }))}
          selected={scoped}
          onChange={setScoped}
        />
        <button type="submit" className="primary">Mint key</button>
      </form>
      {secret === undefined ? null : <Secret label="Your new key, shown once:" value={secret} />}
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.id}>
                <td>{key.name ?? key.id.slice(0, 8)}{key.client_id === undefined ? "" : ` · ${key.client_id}`}</td>
                <td>{key.status}</td>
                <td>{key.expires_at?.slice(0, 10) ?? "never"}</td>
                <td className="actions">
                  {key.status === "active"
                    ? (
                      <>
                        <button
                          type="button"
                          onClick={act(async () =>
                            setSecret(
                              (await json<{ key: string }>(`v2/api-keys/${key.id}/rotate`, { method: "POST" })).key
                            )
                          )}
                        >
                          Rotate
                        </button>
                        <button
                          type="button"
                          className="danger"
                          onClick={act(() => json(`v2/api-keys/${key.id}`, { method: "DELETE" }))}
                        >
                          Revoke
                        </button>
                      </>
                    )
                    : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </main>
  )
}
