import { type FormEvent, useCallback, useEffect, useState } from "react"
import { json } from "../api.js"
import { ImportDefinitions } from "../components/ImportDefinitions.js"
import { Table } from "../components/Table.js"

interface Connector {
  readonly id: number
  readonly name: string
  readonly type: string
}

interface Grant {
  readonly member_id?: string | undefined
  readonly role_id?: string | undefined
  readonly access_type: "owner" | "editor" | "viewer"
}

function Access({ connector }: { readonly connector: Connector }) {
  // Unknown until the stored access has loaded: a form drawn with defaults before then would show
  // a public connector as private, and saving it would make it so.
  const [loaded, setLoaded] = useState(false)
  const [isPublic, setIsPublic] = useState(false)
  const [grants, setGrants] = useState<ReadonlyArray<Grant>>([])
  const [roles, setRoles] = useState<ReadonlyArray<{ id: string; name: string }>>([])
  const [message, setMessage] = useState<string>()
  useEffect(() => {
    void json<{ is_public: boolean; grants: Array<Grant> }>(`v2/connectors/${connector.id}/access`).then((a) => {
      setIsPublic(a.is_public)
      setGrants(a.grants.map(({ access_type, member_id, role_id }) => ({ access_type, member_id, role_id })))
      setLoaded(true)
    }).catch((e) => setMessage(e.message))
    void json<{ roles: Array<{ id: string; name: string }> }>("v2/roles").then((r) => setRoles(r.roles)).catch(() => {})
  }, [connector.id])
  const roleGrant = (roleId: string) => grants.find((g) => g.role_id === roleId)?.access_type ?? ""
  const save = async () => {
    try {
      const clean = grants.map((
        g
      ) => (g.member_id === undefined
        ? { role_id: g.role_id, access_type: g.access_type }
        : { member_id: g.member_id, access_type: g.access_type })
      )
      await json(`v2/connectors/${connector.id}/access`, {
        method: "PUT",
        body: { is_public: isPublic, grants: clean }
      })
      setMessage("Access saved.")
    } catch (e) {
      setMessage((e as Error).message)
    }
  }
  if (!loaded) {
    return (
      <fieldset>
        <legend>Access to {connector.name}</legend>
        <p role="status">{message ?? "Loading access…"}</p>
      </fieldset>
    )
  }
  return (
    <fieldset>
      <legend>Access to {connector.name}</legend>
      <label className="check">
        <input type="checkbox" checked={isPublic} onChange={(e) => setIsPublic(e.target.checked)} />
        Everyone in the organization may use it
      </label>
      {roles.map((role) => (
        <label key={role.id} className="field">
          <span>Role {role.name}</span>
          <select
            value={roleGrant(role.id)}
            onChange={(e) => {
              const rest = grants.filter((g) => g.role_id !== role.id)
              setGrants(
                e.target.value === ""
                  ? rest
                  : [...rest, { role_id: role.id, access_type: e.target.value as Grant["access_type"] }]
              )
            }}
          >
            <option value="">no grant</option>
            <option value="viewer">viewer</option>
            <option value="editor">editor</option>
            <option value="owner">owner</option>
          </select>
        </label>
      ))}
      <button type="button" onClick={save}>Save access</button>
      {message === undefined ? null : <p role="status">{message}</p>}
    </fieldset>
  )
}

interface FileTable {
  readonly table: string
  readonly file_name: string
  readonly sheet?: string
  readonly rows: number
  readonly columns: ReadonlyArray<{ readonly name: string; readonly type: string }>
  readonly preview?: ReadonlyArray<ReadonlyArray<unknown>>
}

/** The tables of a FILES connector, each with its columns and first rows. */
function FileTables({ connector }: { readonly connector: Connector }) {
  const [tables, setTables] = useState<ReadonlyArray<FileTable>>()
  const [message, setMessage] = useState<string>()
  useEffect(() => {
    void json<{ tables: Array<FileTable> }>(`v2/connectors/${connector.id}/files`).then((f) => setTables(f.tables))
      .catch((e) => setMessage(e.message))
  }, [connector.id])
  if (tables === undefined) return <p role="status">{message ?? "Loading tables…"}</p>
  return (
    <section aria-label={`Tables of ${connector.name}`}>
      <h2>Tables of {connector.name}</h2>
      {tables.map((t) => (
        <div key={t.table} className="card">
          <h3>
            {t.table}{" "}
            <span className="muted">
              ({t.rows} rows, from {t.file_name}
              {t.sheet === undefined ? "" : `, sheet ${t.sheet}`})
            </span>
          </h3>
          <Table
            name={t.table}
            content={JSON.stringify({ columns: t.columns, rows: t.preview ?? [], total_rows: t.rows })}
          />
        </div>
      ))}
    </section>
  )
}

/** Files dropped or chosen: a FILES connector, a table each. */
function Upload({ onAdded }: { readonly onAdded: (connector: Connector) => void }) {
  const [files, setFiles] = useState<ReadonlyArray<File>>([])
  const [name, setName] = useState("")
  const [status, setStatus] = useState<string>()
  const upload = async (event: FormEvent) => {
    event.preventDefault()
    if (files.length === 0) return setStatus("Choose or drop files first.")
    const form = new FormData()
    if (name.trim() !== "") form.set("name", name.trim())
    for (const file of files) form.append("files", file, file.name)
    setStatus("Uploading…")
    try {
      const connector = await json<Connector>("v2/connectors", { method: "POST", body: form })
      setStatus(`Connector ${connector.name} added.`)
      setFiles([])
      onAdded(connector)
    } catch (e) {
      setStatus((e as Error).message)
    }
  }
  return (
    <form
      className="card form-grid drop"
      onSubmit={upload}
      aria-label="Upload files"
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        e.preventDefault()
        setFiles([...files, ...Array.from(e.dataTransfer.files)])
      }}
    >
      <h2>Upload files</h2>
      <p className="muted">CSV, TSV, Excel, Parquet or JSON: each file (each sheet) becomes a table. Drop them here.</p>
      <label className="field">
        <span>Files</span>
        <input
          type="file"
          multiple
          aria-label="Files to upload"
          accept=".csv,.tsv,.tab,.xlsx,.parquet,.json,.ndjson,.jsonl"
          onChange={(e) => setFiles([...files, ...Array.from(e.target.files ?? [])])}
        />
      </label>
      {files.length === 0 ? null : <p>{files.map((f) => f.name).join(", ")}</p>}
      <label className="field">
        <span>Name</span>
        <input value={name} onChange={(e) => setName(e.target.value)} placeholder="The files' names" />
      </label>
      <div className="actions">
        <button type="submit" className="primary">Upload</button>
      </div>
      {status === undefined ? null : <p role="status">{status}</p>}
    </form>
  )
}

export function ConnectorsPage() {
  const [connectors, setConnectors] = useState<ReadonlyArray<Connector>>([])
  const [type, setType] = useState<"DEMO" | "POSTGRES">("POSTGRES")
  const [name, setName] = useState("")
  const [pg, setPg] = useState({ host: "127.0.0.1", port: "5432", user: "", password: "", database: "" })
  const [status, setStatus] = useState<string>()
  const [open, setOpen] = useState<number>()
  const selected = connectors.find((c) => c.id === open)
  const load = useCallback(async () => setConnectors(await json<Array<Connector>>("v2/connectors")), [])
  useEffect(() => {
    void load().catch((e) => setStatus(e.message))
  }, [load])
  const config = () =>
    type === "DEMO"
      ? { connector_type: "DEMO", name: name || "Demo retail", demo: {} }
      : {
        connector_type: "POSTGRES",
        name: name || pg.database,
        postgres: { host: pg.host, port: Number(pg.port), user: pg.user, password: pg.password, database: pg.database }
      }
  const test = async () => {
    setStatus("Testing…")
    try {
      const result = await json<{ success: boolean; message?: string; error?: string }>("v2/connectors/test", {
        method: "POST",
        body: { config: config() }
      })
      setStatus(result.success ? "Connection works." : `Connection failed: ${result.message ?? result.error ?? ""}`)
    } catch (e) {
      setStatus((e as Error).message)
    }
  }
  const add = async (event: FormEvent) => {
    event.preventDefault()
    try {
      await json("v2/connectors", { method: "POST", body: { config: config() } })
      setStatus("Connector added.")
      await load()
    } catch (e) {
      setStatus((e as Error).message)
    }
  }
  return (
    <main className="page" aria-labelledby="connectors-title">
      <h1 id="connectors-title">Connectors</h1>
      <ul className="list">
        {connectors.map((c) => (
          <li key={c.id}>
            <button
              type="button"
              className="link"
              aria-expanded={open === c.id}
              onClick={() => setOpen(open === c.id ? undefined : c.id)}
            >
              {c.name}
            </button>
            <span className="badge">{c.type}</span>
          </li>
        ))}
      </ul>
      {selected?.type !== "FILES" ? null : <FileTables key={`files:${selected.id}`} connector={selected} />}
      {selected === undefined ? null : <Access key={selected.id} connector={selected} />}
      {selected === undefined ? null : <ImportDefinitions key={`import:${selected.id}`} connector={selected} />}
      <Upload
        onAdded={(connector) => {
          void load().then(() => setOpen(connector.id)).catch((e) => setStatus(e.message))
        }}
      />
      <form className="card form-grid" onSubmit={add} aria-label="Add a connector">
        <h2>Add a connector</h2>
        <label className="field">
          <span>Type</span>
          <select value={type} onChange={(e) => setType(e.target.value as "DEMO" | "POSTGRES")}>
            <option value="POSTGRES">PostgreSQL</option>
            <option value="DEMO">Demo retail data</option>
          </select>
        </label>
        <label className="field">
          <span>Name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        {type === "POSTGRES"
          ? (["host", "port", "user", "password", "database"] as const).map((field) => (
            <label key={field} className="field">
              <span>{field}</span>
              <input
                type={field === "password" ? "password" : field === "port" ? "number" : "text"}
                value={pg[field]}
                onChange={(e) =>
                  setPg({ ...pg, [field]: e.target.value })}
              />
            </label>
          ))
          : null}
        <div className="actions">
          <button type="button" onClick={test}>Test connection</button>
          <button type="submit" className="primary">Add</button>
        </div>
        {status === undefined ? null : <p role="status">{status}</p>}
      </form>
    </main>
  )
}
