import { type FormEvent, useCallback, useEffect, useRef, useState } from "react"
import { json } from "../api.js"
import { CheckSet } from "../components/CheckSet.js"
import { applyEvent, type Choice, type Item, type Provenance, Timeline } from "../components/Timeline.js"
import { ask, type Asset, type Cell, type ChatEvent, type Clarification, follow, lastEventId } from "../stream.js"

interface ChatSummary {
  readonly id: string
  readonly summary: string
  readonly preview: string
  readonly updated_at: string
  readonly is_running: boolean
}

interface Connector {
  readonly id: number
  readonly name: string
  readonly type: string
}

interface Model {
  readonly id: string
  readonly default: boolean
}

const toolNames = [
  ["sql_enabled", "SQL"],
  ["python_enabled", "Python"],
  ["web_search_enabled", "Web search"],
  ["ontology_enabled", "Context Library"]
] as const

// The events of a run still streaming, kept per tab: after a reload they are shown again and the
// stream resumes after the last of them (`Last-Event-ID`), so nothing shows twice.
const runKey = (chatId: string) => `sightline:run:${chatId}`
const savedRun = (chatId: string): { question: string; events: Array<ChatEvent> } | undefined => {
  const text = sessionStorage.getItem(runKey(chatId))
  return text === null ? undefined : JSON.parse(text)
}
const saveRun = (chatId: string, run: { question: string; events: Array<ChatEvent> }) => {
  try {
    sessionStorage.setItem(runKey(chatId), JSON.stringify(run))
  } catch {
    // Storage full: a reload then replays the run from its start instead.
  }
}

interface StoredMessage {
  readonly role: string
  readonly cell_id: string
  readonly provenance?: Provenance
  readonly clarification?: Clarification
}

/** How the chat's last answer was made. */
const lastProvenance = async (chatId: string): Promise<Provenance | undefined> =>
  (await json<{ messages: Array<StoredMessage> }>(`v2/chats/${chatId}`)).messages
    .filter((m) => m.role === "assistant").at(-1)?.provenance

/** The items with the last answer shown with how it was made. */
const withLastProvenance = (items: ReadonlyArray<Item>, provenance: Provenance): ReadonlyArray<Item> => {
  const at = items.map((item) => item.kind === "answer" && item.text !== "").lastIndexOf(true)
  return at < 0 ? items : items.map((item, i) => (i === at && item.kind === "answer" ? { ...item, provenance } : item))
}

/** The stored conversation: cells oldest first, each with its assets; answers with how they were made. */
const loadHistory = async (chatId: string): Promise<Array<Item>> => {
  const [chat, cells] = await Promise.all([
    json<{ assets: Array<Asset & { cell_id?: string; message_cell_id?: string }>; messages: Array<StoredMessage> }>(
      `v2/chats/${chatId}`
    ),
    json<{ cells: Array<Cell & { role?: string; created_at: string }> }>(`v2/chats/${chatId}/cells?limit=500`)
  ])
  const ordered = [...cells.cells].sort((a, b) => a.created_at.localeCompare(b.created_at))
  const assetsOf = (cellId: string) => chat.assets.filter((asset) => asset.cell_id === cellId)
  const items = ordered.flatMap((cell): Array<Item> => {
    if (cell.role === "user") return [{ kind: "user", key: cell.id, text: cell.content ?? "" }]
    if (cell.role === "assistant") {
      const message = chat.messages.find((m) => m.cell_id === cell.id)
      const answer: Item = {
        kind: "answer",
        key: cell.id,
        text: cell.content ?? "",
        assets: [],
        provenance: message?.provenance
      }
      // An answer that asked back keeps its choices.
      return message?.clarification === undefined
        ? [answer]
        : [answer, { kind: "clarification", key: `${cell.id}:clarification`, ...message.clarification }]
    }
    return [{ kind: "cell", key: cell.id, cell, assets: assetsOf(cell.id) }]
  })
  return withPlans(items)
}

/**
 * The plans an answer's investigations ran (kept in its provenance), each shown where it was
 * announced: before the first of its steps' cells in that answer's run.
 */
const withPlans = (items: ReadonlyArray<Item>): Array<Item> => {
  const shown = [...items]
  for (let at = shown.length - 1; at >= 0; at--) {
    const answer = shown[at]!
    if (answer.kind !== "answer" || answer.provenance?.plans === undefined) continue
    const start = shown.slice(0, at).map((item) => item.kind).lastIndexOf("user") + 1
    for (const [n, plan] of [...answer.provenance.plans.entries()].reverse()) {
      const titles = new Set(plan.steps.map((step) => step.title))
      const first = shown.findIndex((item, i) =>
        i >= start && i < at && item.kind === "cell" && titles.has(item.cell.content ?? "")
      )
      shown.splice(first === -1 ? at : first, 0, { kind: "plan", key: `${answer.key}:plan:${n}`, ...plan })
    }
  }
  return shown
}

export function ChatPage(
  { chatId, navigate }: { readonly chatId: string | undefined; readonly navigate: (hash: string) => void }
) {
  const [chats, setChats] = useState<ReadonlyArray<ChatSummary>>([])
  const [total, setTotal] = useState(0)
  const [search, setSearch] = useState("")
  const [items, setItems] = useState<ReadonlyArray<Item>>([])
  // "Open in chat" from a dashboard's tile: its question, ready to ask (or to refine first).
  const [question, setQuestion] = useState(() =>
    new URLSearchParams(/\?(.*)$/.exec(window.location.hash)?.[1] ?? "").get("ask") ?? ""
  )
  // Files sent with the next question: tables become a connector of the asker's.
  const [attached, setAttached] = useState<ReadonlyArray<File>>([])
  const [running, setRunning] = useState(false)
  const [error, setError] = useState<string>()
  const [connectors, setConnectors] = useState<ReadonlyArray<Connector>>([])
  const [selected, setSelected] = useState<ReadonlySet<number>>(new Set())
  const [models, setModels] = useState<ReadonlyArray<Model>>([])
  const [model, setModel] = useState("")
  const [tools, setTools] = useState<Record<string, boolean>>({ sql_enabled: true, python_enabled: true })
  const abort = useRef<AbortController | undefined>(undefined)
  const current = useRef<string | undefined>(chatId)
  current.current = chatId
  // The chat whose answer is running in this view (a new chat has its id only once the run starts).
  const runningChat = useRef<string | undefined>(undefined)
  // The chat this view created, until the address names it: a follow-up asked before then goes to it.
  const created = useRef<string | undefined>(undefined)
  // Whether this view is sending a question now (set before the request, so a navigation to the
  // chat it created does not cancel it).
  const sending = useRef(false)

  const loadChats = useCallback(async (term: string) => {
    const query = term === "" ? "" : `&search_term=${encodeURIComponent(term)}`
    const page = await json<{ chats: Array<ChatSummary>; total_count: number }>(`v2/chats?limit=50${query}`)
    setChats(page.chats)
    setTotal(page.total_count)
  }, [])

  useEffect(() => {
    void loadChats("").catch((e) => setError(e.message))
    void json<Array<Connector>>("v2/connectors").then((list) => {
      setConnectors(list)
      setSelected(new Set(list.map((c) => c.id)))
    }).catch(() => setConnectors([]))
    void json<{ models: Array<Model> }>("v2/models").then((m) => setModels(m.models)).catch(() => setModels([]))
  }, [loadChats])

  // Streams a run's events into the view, saving them for a reload.
  const consume = useCallback((id: () => string | undefined, question: string, base: ReadonlyArray<Item>) => {
    let events: Array<ChatEvent> = []
    let shown = base
    return (event: ChatEvent) => {
      const chat = event.type === "metadata" ? event.chat_id : id()
      events = [...events, event]
      shown = applyEvent(shown, event, `run:${chat}:${base.length}`)
      if (chat !== undefined) {
        if (event.type === "done") sessionStorage.removeItem(runKey(chat))
        else saveRun(chat, { question, events })
      }
      if (chat === current.current || current.current === undefined) setItems(shown)
    }
  }, [])

  // Opening a chat: its stored conversation, then the run still going on, resumed where this tab left it.
  useEffect(() => {
    // The address caught up with the chat this view created while it asks that chat again: the view
    // already shows it, live.
    if (chatId !== undefined && chatId === created.current && sending.current) return
    if (chatId !== created.current) created.current = undefined
    abort.current?.abort()
    setError(undefined)
    if (chatId === undefined) {
      setItems([])
      return
    }
    const controller = new AbortController()
    abort.current = controller
    void (async () => {
      const saved = savedRun(chatId)
      const stored = await loadHistory(chatId)
      const summary = (await json<{ chats: Array<ChatSummary> }>(`v2/chats?limit=100`)).chats.find((c) =>
        c.id === chatId
      )
      if (controller.signal.aborted) return
      if (saved === undefined || summary?.is_running !== true) {
        if (saved !== undefined) sessionStorage.removeItem(runKey(chatId))
        setItems(stored)
        if (summary?.is_running === true) {
          runningChat.current = chatId
          setRunning(true)
          await follow(chatId, consume(() => chatId, "", stored), controller.signal, undefined)
        }
        return
      }
      // A run this tab started and was showing: its events again, then the rest.
      const base: ReadonlyArray<Item> = stored.some((item) => item.kind === "user" && item.text === saved.question)
        ? stored
        : [...stored, { kind: "user", key: `q:${chatId}`, text: saved.question }]
      const handle = consume(() => chatId, saved.question, base)
      for (const event of saved.events) handle(event)
      runningChat.current = chatId
      setRunning(true)
      await follow(chatId, handle, controller.signal, lastEventId(chatId))
    })().catch((e) => {
      if (!controller.signal.aborted) setError(e.message)
    }).finally(() => {
      if (!controller.signal.aborted) {
        setRunning(false)
        void loadChats(search)
      }
    })
    return () => controller.abort()
  }, [chatId])

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    const text = question.trim()
    if (text === "" || running) return
    setQuestion("")
    const files = attached
    setAttached([])
    await send({ question: text }, text, files)
  }

  // A step pinned to a dashboard is a library change: the tile shows once it merges.
  const pin = async (cellId: string, dashboard: string) => {
    const pinned = await json<{ path: string; change: { change_number: number; status: string } }>(
      `v2/chats/${chatId ?? created.current}/cells/${cellId}/pin`,
      { method: "POST", body: { dashboard } }
    )
    return pinned.change.status === "approved"
      ? `Pinned to ${pinned.path}.`
      : `Change #${pinned.change.change_number} filed to add it to ${pinned.path}: the tile shows once it merges.`
  }

  // A choice of the clarification: the run answers the complete question it stands for.
  const choose = (choice: Choice) => {
    if (running || (chatId ?? created.current) === undefined) return
    void send({ choice: choice.id }, choice.question, [])
  }

  const send = async (
    asked: { readonly question: string } | { readonly choice: string },
    text: string,
    files: ReadonlyArray<File>
  ) => {
    setError(undefined)
    abort.current?.abort()
    const controller = new AbortController()
    abort.current = controller
    sending.current = true
    // The chat to ask: the one shown, or the one this view just created.
    const chat = chatId ?? created.current
    let newChat = chat
    const base: ReadonlyArray<Item> = [...items, { kind: "user", key: `q:${Date.now()}`, text }]
    setItems(base)
    setRunning(true)
    const handle = consume(() => newChat, text, base)
    try {
      await ask(
        {
          ...asked,
          ...(chat === undefined ? {} : { chat_id: chat }),
          ...(chat === undefined && model !== "" ? { model } : {}),
          connector_ids: [...selected],
          tools
        },
        (e) => {
          if (e.type === "metadata") runningChat.current = e.chat_id
          if (e.type === "metadata" && newChat === undefined) {
            newChat = e.chat_id
            created.current = e.chat_id
            current.current = e.chat_id
            // The address names the chat, so a reload comes back to it (the hash change must not restart it).
            history.replaceState(null, "", `#/chats/${e.chat_id}`)
          }
          handle(e)
        },
        controller.signal,
        files
      )
    } catch (e) {
      if (!controller.signal.aborted) setError((e as Error).message)
    } finally {
      sending.current = false
      setRunning(false)
      void loadChats(search)
      // The connector its files became is one to ask again.
      if (files.length > 0) {
        void json<Array<Connector>>("v2/connectors").then((list) => {
          setConnectors(list)
          setSelected((chosen) =>
            new Set([...chosen, ...list.filter((c) => !connectors.some((k) => k.id === c.id)).map((c) => c.id)])
          )
        }).catch(() => undefined)
      }
      // The answer just streamed gets its panel once stored (the view keeps the streamed items).
      const answered = newChat
      if (answered !== undefined && !controller.signal.aborted) {
        void lastProvenance(answered).then((provenance) => {
          // As `consume` shows events: a new chat's view may not have its id as its address yet.
          if (provenance !== undefined && (current.current === answered || current.current === undefined)) {
            setItems((shown) => withLastProvenance(shown, provenance))
          }
        }).catch(() => undefined)
      }
      if (newChat !== undefined && newChat !== chat) navigate(`#/chats/${newChat}`)
    }
  }

  const cancel = async () => {
    const id = runningChat.current ?? chatId
    if (id === undefined) return
    await json(`v2/chats/${id}/cancel`, { method: "POST" }).catch((e) => setError(e.message))
  }

  return (
    <div className="chat-layout">
      <aside className="chat-list" aria-label="Chats">
        <button
          type="button"
          className="primary"
          onClick={() => {
            // A chat this view created is left, even before the address named it.
            created.current = undefined
            if (chatId === undefined) setItems([])
            navigate("#/chats")
          }}
        >
          New chat
        </button>
        <label className="field">
          <span>Search chats</span>
          <input
            type="search"
            value={search}
            onChange={(e) => {
              setSearch(e.target.value)
              void loadChats(e.target.value)
            }}
          />
        </label>
        <p className="muted">{total} chats</p>
        <ul>
          {chats.map((chat) => (
            <li key={chat.id}>
              <a href={`#/chats/${chat.id}`} aria-current={chat.id === chatId ? "page" : undefined}>
                <span className="chat-title">{chat.summary || chat.preview || "Untitled"}</span>
                {chat.is_running ? <span className="badge">running</span> : null}
              </a>
            </li>
          ))}
        </ul>
      </aside>
      <section className="conversation" aria-label="Conversation">
        {items.length === 0 ? <p className="muted empty">Ask a question about your data.</p> : null}
        <Timeline
          items={items}
          onChoose={running ? undefined : choose}
          onPin={(chatId ?? created.current) === undefined ? undefined : pin}
        />
        {error === undefined ? null : <p className="error" role="alert">{error}</p>}
        <form
          className="ask"
          onSubmit={submit}
          onDragOver={(e) => e.preventDefault()}
          onDrop={(e) => {
            e.preventDefault()
            setAttached([...attached, ...Array.from(e.dataTransfer.files)])
          }}
        >
          <label className="field grow">
            <span>Question</span>
            <textarea
              rows={2}
              value={question}
              onChange={(e) => setQuestion(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && !e.shiftKey) {
                  e.preventDefault()
                  e.currentTarget.form?.requestSubmit()
                }
              }}
              placeholder="What were the top 5 products by revenue last year?"
            />
          </label>
          <div className="attach">
            <label className="field">
              <span>Files (a table per CSV, Excel, Parquet or JSON file)</span>
              <input
                type="file"
                multiple
                aria-label="Attach files"
                onChange={(e) => {
                  setAttached([...attached, ...Array.from(e.target.files ?? [])])
                  e.target.value = ""
                }}
              />
            </label>
            {attached.length === 0 ? null : (
              <ul className="attached" aria-label="Attached files">
                {attached.map((file, i) => (
                  <li key={`${file.name}:${i}`}>
                    {file.name}{" "}
                    <button
                      type="button"
                      className="link"
                      onClick={() => setAttached(attached.filter((_, j) => j !== i))}
                    >
                      remove
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </div>
          <div className="ask-actions">
            {running
              ? <button type="button" className="danger" onClick={cancel}>Cancel</button>
              : <button type="submit" className="primary">Ask</button>}
          </div>
          <details className="ask-options">
            <summary>Connectors, tools and model</summary>
            <CheckSet
              legend="Connectors"
              empty="No connectors you can use."
              items={connectors.map((c) => ({
                key: c.id,
                label: (
                  <>
                    {c.name} <span className="muted">({c.type})</span>
                  </>
                )
              }))}
              selected={selected}
              onChange={setSelected}
            />
            <fieldset>
              <legend>Tools</legend>
              {toolNames.map(([key, label]) => (
                <label key={key} className="check">
                  <input
                    type="checkbox"
                    checked={tools[key] ?? false}
                    onChange={(e) => setTools({ ...tools, [key]: e.target.checked })}
                  />
                  {label}
                </label>
              ))}
            </fieldset>
            {chatId === undefined && models.length > 1
              ? (
                <label className="field">
                  <span>Model</span>
                  <select value={model} onChange={(e) => setModel(e.target.value)}>
                    <option value="">Default</option>
                    {models.map((m) => <option key={m.id} value={m.id}>{m.id}</option>)}
                  </select>
                </label>
              )
              : null}
          </details>
        </form>
      </section>
    </div>
  )
}
