import * as Playbook from "@sightline/core/Playbook"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import { type FormEvent, useCallback, useEffect, useState } from "react"
import { json } from "../api.js"
import { CheckSet } from "../components/CheckSet.js"
import { type Block, ReportView } from "../components/ReportView.js"

interface PlaybookRow {
  readonly id: string
  readonly name: string
  readonly prompt: string
  readonly status: string
  readonly connector_ids: ReadonlyArray<number>
  readonly cron_string?: string
  readonly email_addresses?: ReadonlyArray<string>
  readonly chat_channel_id?: string
  readonly dashboard?: string
}

interface Report {
  readonly id: string
  readonly subject: string
  readonly summary: string
  readonly blocks: ReadonlyArray<Block>
  readonly chat_id?: string
  readonly created_at: string
}

const dateFormat = new Intl.DateTimeFormat(undefined, {
  weekday: "short",
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  timeZone: "UTC",
  timeZoneName: "short"
})

/** The schedule in words: its next five firings, or why it is not valid. */
function SchedulePreview({ cron }: { readonly cron: string }) {
  if (cron.trim() === "") return <p className="muted">No schedule: runs only when you run it.</p>
  return Either.match(Playbook.upcomingFirings(cron, DateTime.unsafeNow(), 5), {
    onLeft: (issue) => <p className="error" role="alert">{issue}</p>,
    onRight: (firings) => (
      <div aria-live="polite">
        <p className="muted">Next runs:</p>
        <ol className="firings">
          {firings.map((at) => <li key={DateTime.formatIso(at)}>{dateFormat.format(DateTime.toDate(at))}</li>)}
        </ol>
      </div>
    )
  })
}

function Editor({ onChange, playbook }: { readonly playbook: PlaybookRow; readonly onChange: () => void }) {
  const [name, setName] = useState(playbook.name)
  const [prompt, setPrompt] = useState(playbook.prompt)
  const [cron, setCron] = useState(playbook.cron_string ?? "")
  const [emails, setEmails] = useState((playbook.email_addresses ?? []).join(", "))
  const [connectors, setConnectors] = useState<ReadonlyArray<{ id: number; name: string }>>([])
  const [chosen, setChosen] = useState<ReadonlySet<number>>(new Set(playbook.connector_ids))
  const [reports, setReports] = useState<ReadonlyArray<Report>>([])
  const [channels, setChannels] = useState<ReadonlyArray<{ id: string; name: string }>>([])
  const [channel, setChannel] = useState(playbook.chat_channel_id ?? "")
  const [dashboards, setDashboards] = useState<ReadonlyArray<{ name: string; title?: string }>>([])
  // What a run delivers: the prompt's answer (""), or a dashboard by name.
  const [dashboard, setDashboard] = useState(playbook.dashboard ?? "")
  const [message, setMessage] = useState<string>()
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)

  const loadReports = useCallback(async () => {
    setReports((await json<{ reports: Array<Report> }>(`v2/playbooks/${playbook.id}`)).reports)
  }, [playbook.id])
  useEffect(() => {
    void json<Array<{ id: number; name: string }>>("v2/connectors").then(setConnectors).catch(() => setConnectors([]))
    void loadReports().catch((e) => setError(e.message))
    void json<{ chat_channels: Array<{ id: string; name: string }> }>("v2/chat-channels")
      .then((r) => setChannels(r.chat_channels))
      .catch(() => setChannels([]))
    void json<{ dashboards: Array<{ name: string; title?: string }> }>("v2/dashboards")
      .then((r) => setDashboards(r.dashboards))
      .catch(() => setDashboards([]))
  }, [loadReports])

  const run = (label: string, f: () => Promise<unknown>) => async () => {
    setBusy(true)
    setError(undefined)
    setMessage(undefined)
    try {
      await f()
      setMessage(label)
      onChange()
      await loadReports()
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  const save = (event: FormEvent) => {
    event.preventDefault()
    void run("Saved.", () =>
      json(`v2/playbooks/${playbook.id}`, {
        method: "PATCH",
        body: {
          name,
          prompt,
          // "" clears the schedule (`null` is refused).
          cron_string: cron.trim(),
          connector_ids: [...chosen],
          email_addresses: emails.split(/[\s,]+/).filter((e) => e !== ""),
          ...(channel === "" ? {} : { chat_channel_id: channel }),
          dashboard
        }
      }))()
  }

  return (
    <section className="card" aria-label={`Playbook ${playbook.name || "(untitled)"}`}>
      <form className="form-grid" onSubmit={save}>
        <label className="field">
          <span>Name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required />
        </label>
        {dashboards.length === 0 && dashboard === "" ? null : (
          <label className="field">
            <span>Deliver</span>
            <select value={dashboard} onChange={(e) => setDashboard(e.target.value)}>
              <option value="">the answer to the prompt</option>
              {dashboards.map((d) => <option key={d.name} value={d.name}>the {d.title ?? d.name} dashboard</option>)}
              {dashboard === "" || dashboards.some((d) => d.name === dashboard)
                ? null
                : <option value={dashboard}>the {dashboard} dashboard (not readable now)</option>}
            </select>
          </label>
        )}
        {dashboard === "" ?
          (
            <label className="field">
              <span>Prompt</span>
              <textarea rows={4} value={prompt} onChange={(e) => setPrompt(e.target.value)} />
            </label>
          ) :
          (
            <p className="muted">
              Each run sends a snapshot of every tile, as you see them, and a link to the dashboard.
            </p>
          )}
        <CheckSet
          legend="Connectors"
          items={connectors.map((c) => ({ key: c.id, label: c.name }))}
          selected={chosen}
          onChange={setChosen}
        />
        <label className="field">
          <span>Schedule (cron, UTC: minute hour day month weekday)</span>
          <input value={cron} onChange={(e) => setCron(e.target.value)} placeholder="0 9 * * 1-5" />
        </label>
        <SchedulePreview cron={cron} />
        <label className="field">
          <span>E-mail the report to (comma-separated)</span>
          <input value={emails} onChange={(e) => setEmails(e.target.value)} />
        </label>
        {channels.length === 0 ? null : (
          <label className="field">
            <span>Also post the report to a chat channel</span>
            <select value={channel} onChange={(e) => setChannel(e.target.value)}>
              <option value="">none</option>
              {channels.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
            </select>
          </label>
        )}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>Save</button>
          <button
            type="button"
            disabled={busy}
            onClick={run("Deployed.", () => json(`v2/playbooks/${playbook.id}/deploy`, { method: "POST" }))}
          >
            Deploy
          </button>
          <button
            type="button"
            disabled={busy}
            onClick={run(
              "Report ready.",
              () => json(`v2/playbooks/${playbook.id}/run`, { method: "POST", body: { dry_run: false } })
            )}
          >
            Run now
          </button>
        </div>
        <p className="muted">Status: {playbook.status}</p>
        {busy ? <p role="status">Working…</p> : null}
        {message === undefined ? null : <p role="status" className="ok">{message}</p>}
        {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      </form>
      <h3>Reports</h3>
      {reports.length === 0 ? <p className="muted">No reports yet.</p> : null}
      {reports.map((report) => (
        <details key={report.id} className="report">
          <summary>
            {report.subject} <span className="muted">{report.created_at.slice(0, 16).replace("T", " ")}</span>
          </summary>
          <ReportView blocks={report.blocks} chatId={report.chat_id} />
        </details>
      ))}
    </section>
  )
}

export function PlaybooksPage() {
  const [playbooks, setPlaybooks] = useState<ReadonlyArray<PlaybookRow>>([])
  const [open, setOpen] = useState<string>()
  const [error, setError] = useState<string>()
  const load = useCallback(async () => {
    setPlaybooks((await json<{ playbooks: Array<PlaybookRow> }>("v2/playbooks?limit=100")).playbooks)
  }, [])
  useEffect(() => {
    void load().catch((e) => setError(e.message))
  }, [load])
  const create = async () => {
    try {
      const created = await json<PlaybookRow>("v2/playbooks", { method: "POST" })
      await load()
      setOpen(created.id)
    } catch (e) {
      setError((e as Error).message)
    }
  }
  const opened = playbooks.find((p) => p.id === open)
  return (
    <main className="page" aria-labelledby="playbooks-title">
      <h1 id="playbooks-title">Playbooks</h1>
      <button type="button" className="primary" onClick={create}>New playbook</button>
      {error === undefined ? null : <p className="error" role="alert">{error}</p>}
      <ul className="list">
        {playbooks.map((p) => (
          <li key={p.id}>
            <button
              type="button"
              className="link"
              aria-expanded={p.id === open}
              onClick={() => setOpen(p.id === open ? undefined : p.id)}
            >
              {p.name || "(untitled)"}
            </button>
            <span className="badge">{p.status}</span>
          </li>
        ))}
      </ul>
      {opened === undefined ? null : <Editor key={opened.id} playbook={opened} onChange={() => void load()} />}
    </main>
  )
}
