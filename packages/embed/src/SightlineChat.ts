/**
 * `<sightline-chat>`: Sightline's chat in a host's page, for one of the host's end users.
 *
 * The host sets `server` (Sightline's base URL) and the `getToken` property (an async function that
 * asks the host's own backend to mint a session, `POST /v2/embed/sessions`, and resolves to its
 * `{token, expires_at}`). The element then offers the session's suggested questions and its chats,
 * streams each answer in (its Markdown, tables with formatted numbers, charts, how the question was
 * read and whether a reviewed definition vouches for it), asks back where the question was unclear,
 * continues the chat with follow-ups, and takes a thumbs up or down with a comment.
 *
 * Events: `answer` (`detail`: `{chat_id, message_id, text}`) when an answer completes, `error`
 * (`detail`: `{message, status}`), and `token-expired` when the server refused the token and the
 * element asked `getToken()` again.
 *
 * @since 0.1.0
 */
import { chart } from "./internal/chart.js"
import type { Connection, StreamEvent } from "./internal/connection.js"
import { append, h } from "./internal/dom.js"
import { SightlineElement } from "./internal/element.js"
import { markdown } from "./internal/markdown.js"
import type { Strings } from "./internal/strings.js"
import { table, valueCell } from "./internal/table.js"

interface SessionInfo {
  readonly external_user_id: string
  readonly suggestions: ReadonlyArray<string>
}

interface ChatSummary {
  readonly id: string
  readonly summary: string
}

interface Asset {
  readonly type: string
  readonly name: string
  readonly content?: string
}

interface Cell {
  readonly reading?: { readonly text: string }
  readonly trusted_source?: { readonly kind: string; readonly name: string }
}

/** A result table asset (`{columns, rows}`) with the page language's number format. */
const tableOf = (asset: Asset, strings: Strings, format: Intl.NumberFormat): ReadonlyArray<HTMLElement> => {
  let result: {
    columns: ReadonlyArray<{ name: string }>
    rows: ReadonlyArray<ReadonlyArray<unknown>>
    total_rows?: number
  }
  try {
    result = JSON.parse(asset.content ?? "")
  } catch {
    return []
  }
  // A lookup that found nothing is not worth a table.
  if (result.rows.length === 0) return []
  return [
    table(
      `${strings.table} ${asset.name}`,
      result.columns.map((column) => column.name),
      result.rows.map((row) => row.map((value) => valueCell(value, format)))
    ),
    ...(result.total_rows !== undefined && result.total_rows > result.rows.length
      ? [h("p", { class: "reading" }, `${result.rows.length} / ${result.total_rows} ${strings.rows}`)]
      : [])
  ]
}

/**
 * The chat element.
 *
 * @since 0.1.0
 * @category elements
 */
export class SightlineChat extends SightlineElement {
  static readonly observedAttributes = ["server"]

  private chatId: string | undefined
  private busy = false
  private readonly log: HTMLElement
  private readonly status: HTMLElement
  private readonly chatList: HTMLElement
  private readonly suggestions: HTMLElement
  private readonly input: HTMLTextAreaElement
  private readonly askButton: HTMLButtonElement

  constructor() {
    super()
    const strings = this.strings
    this.log = h("div", {
      class: "log",
      part: "log",
      role: "log",
      "aria-live": "polite",
      "aria-label": strings.conversation
    })
    this.status = h("div", { class: "visually-hidden", role: "status" })
    this.chatList = h("ul", { part: "chat-list" })
    this.suggestions = h("div", { class: "suggestions", part: "suggestions" })
    this.input = h("textarea", {
      part: "input",
      rows: "2",
      placeholder: strings.placeholder,
      "aria-label": strings.question
    })
    this.askButton = h("button", { type: "submit", class: "primary", part: "ask" }, strings.ask)
    const form = h("form", { class: "ask", part: "form" }, this.input, this.askButton)
    form.addEventListener("submit", (event) => {
      event.preventDefault()
      void this.ask({ question: this.input.value })
    })
    // Enter asks, Shift+Enter starts a new line.
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault()
        form.requestSubmit()
      }
    })
    const newChat = h("button", { type: "button", part: "new-chat" }, strings.newChat)
    newChat.addEventListener("click", () => this.startOver())
    append(this.root, [
      h(
        "div",
        { class: "layout" },
        h("nav", { "aria-label": strings.chats, part: "nav" }, h("h2", {}, strings.chats), newChat, this.chatList),
        h(
          "section",
          { part: "main" },
          h("h2", { class: "visually-hidden" }, strings.conversation),
          this.suggestions,
          this.log,
          form,
          this.status
        )
      )
    ])
  }

  protected override renewing(): void {
    this.status.textContent = this.strings.reconnecting
  }

  protected showError(message: string): void {
    append(this.log, [h("div", { class: "turn error", part: "error", role: "alert" }, message)])
  }

  /** Reads the session's suggestions and chats. */
  protected async load(connection: Connection): Promise<void> {
    const [info, chats] = await Promise.all([
      connection.json<SessionInfo>("v2/embed/session"),
      connection.json<{ chats: ReadonlyArray<ChatSummary> }>("v2/chats?limit=20")
    ])
    this.showSuggestions(info.suggestions)
    this.showChats(chats.chats)
  }

  private showSuggestions(questions: ReadonlyArray<string>): void {
    this.suggestions.replaceChildren()
    if (questions.length === 0) return
    append(this.suggestions, [h("span", { class: "reading" }, this.strings.suggestions)])
    for (const question of questions.slice(0, 4)) {
      const button = h("button", { type: "button", part: "suggestion" }, question)
      button.addEventListener("click", () => void this.ask({ question }))
      append(this.suggestions, [button])
    }
  }

  private showChats(chats: ReadonlyArray<ChatSummary>): void {
    this.chatList.replaceChildren(
      ...chats.map((chat) => {
        const button = h("button", { type: "button", part: "chat-item" }, chat.summary || chat.id)
        if (chat.id === this.chatId) button.setAttribute("aria-current", "true")
        button.addEventListener("click", () => void this.open(chat.id))
        return h("li", {}, button)
      })
    )
  }

  private startOver(): void {
    this.chatId = undefined
    this.log.replaceChildren()
    this.input.focus()
  }

  /** Shows a stored chat: its questions and answers, charts and tables included. */
  private async open(chatId: string): Promise<void> {
    const connection = this.connect()
    if (connection === undefined) return
    try {
      const chat = await connection.json<{
        messages: ReadonlyArray<{ id: string; role: string; content: string; assets?: ReadonlyArray<Asset> }>
      }>(`v2/chats/${chatId}`)
      this.chatId = chatId
      this.log.replaceChildren()
      for (const message of chat.messages) {
        if (message.role === "user") append(this.log, [this.userTurn(message.content)])
        else {
          const turn = this.answerTurn()
          turn.render(message.content, message.assets ?? [], [])
          turn.finish(message.id)
        }
      }
    } catch (error) {
      this.fail(error)
    }
  }

  private userTurn(question: string): HTMLElement {
    return h("div", { class: "turn user", part: "question" }, question)
  }

  /** An answer's place in the log, filled as its events arrive. */
  private answerTurn() {
    const strings = this.strings
    const format = this.numbers
    const body = h("div", { class: "answer-body" })
    const extras = h("div", {})
    const turn = h("div", { class: "turn answer", part: "answer", "aria-busy": "true" }, body, extras)
    append(this.log, [turn])
    let shown = { text: "\u0000", assets: -1, cells: -1, hasTable: false }
    return {
      element: turn,
      render: (text: string, assets: ReadonlyArray<Asset>, cells: ReadonlyArray<Cell>) => {
        if (text !== shown.text) body.replaceChildren(markdown(text))
        // A table asset shows only where the answer's text has no table of its own.
        const hasTable = body.querySelector("table") !== null
        // Charts are drawn once: only a new asset or step, or a table appearing in the text, draws the
        // extras again.
        const changed = assets.length !== shown.assets || cells.length !== shown.cells || hasTable !== shown.hasTable
        shown = { text, assets: assets.length, cells: cells.length, hasTable }
        if (!changed) return
        extras.replaceChildren()
        for (const asset of assets) {
          if (asset.type === "chart" && asset.content !== undefined) {
            append(extras, [chart(asset.content, `${strings.chart}: ${asset.name}`, strings.chartFailed)])
          } else if (asset.type === "table" && !hasTable) append(extras, tableOf(asset, strings, format))
        }
        // A step is sent when it starts and again when it ends: its last state counts, once. Each
        // reading once, as a model that looked several times read the question the same way.
        const readings = new Map<string, Cell>()
        for (const cell of cells) {
          if (cell.reading !== undefined) readings.set(cell.reading.text, cell)
        }
        for (const cell of readings.values()) {
          if (cell.reading === undefined) continue
          append(extras, [
            h(
              "p",
              { class: "reading", part: "reading" },
              `${strings.readAs}: ${cell.reading.text}`,
              cell.trusted_source === undefined
                ? null
                : h("span", { class: "badge", part: "trusted", title: cell.trusted_source.name }, strings.trusted)
            )
          ])
        }
      },
      finish: (messageId: string | undefined) => {
        turn.removeAttribute("aria-busy")
        if (messageId !== undefined && this.chatId !== undefined) append(turn, [this.feedback(this.chatId, messageId)])
      }
    }
  }

  /** Thumbs up or down, then an optional comment. */
  private feedback(chatId: string, messageId: string): HTMLElement {
    const strings = this.strings
    const box = h("div", { class: "feedback", part: "feedback" })
    const rate = async (rating: "up" | "down", comment?: string) => {
      await this.connect()?.json(`v2/chats/${chatId}/messages/${messageId}/feedback`, {
        method: "PUT",
        body: JSON.stringify({ rating, ...(comment === undefined || comment === "" ? {} : { comment }) })
      })
    }
    const thanks = () => box.replaceChildren(h("span", { class: "reading", role: "status" }, strings.thanks))
    const up = h("button", { type: "button", part: "rate-up" }, `▲ ${strings.helpful}`)
    const down = h("button", { type: "button", part: "rate-down" }, `▼ ${strings.notHelpful}`)
    for (const [button, rating] of [[up, "up"], [down, "down"]] as const) {
      button.addEventListener("click", () => {
        void rate(rating).then(() => {
          const comment = h("input", { type: "text", "aria-label": strings.comment, placeholder: strings.comment })
          const send = h("button", { type: "submit" }, strings.send)
          const form = h("form", { class: "feedback" }, comment, send)
          form.addEventListener("submit", (event) => {
            event.preventDefault()
            void rate(rating, comment.value).then(thanks, (error: unknown) => this.fail(error))
          })
          box.replaceChildren(form)
          comment.focus()
        }, (error: unknown) => this.fail(error))
      })
    }
    append(box, [up, down])
    return box
  }

  /** Asks a question (or answers a clarification with a choice) and streams the answer in. */
  async ask(request: { readonly question?: string; readonly choice?: string }): Promise<void> {
    const connection = this.connect()
    if (connection === undefined || this.busy) return
    if (request.question !== undefined && request.question.trim() === "") return
    this.busy = true
    this.askButton.disabled = true
    this.status.textContent = this.strings.answering
    if (request.question !== undefined) append(this.log, [this.userTurn(request.question)])
    this.input.value = ""
    const turn = this.answerTurn()
    let text = ""
    let messageId: string | undefined
    let failed: string | undefined
    const assets: Array<Asset> = []
    const cells: Array<Cell> = []
    const body = JSON.stringify({ ...request, ...(this.chatId === undefined ? {} : { chat_id: this.chatId }) })
    try {
      await connection.stream(
        () =>
          connection.fetch("v2/chats/stream", {
            method: "POST",
            headers: { "content-type": "application/json", accept: "text/event-stream" },
            body
          }),
        ({ data }: StreamEvent) => {
          switch (data.type) {
            case "metadata":
              this.chatId = data["chat_id"] as string
              messageId = data["id"] as string
              break
            case "text":
              text += data["text"] as string
              break
            case "asset":
              assets.push(data["asset"] as Asset)
              break
            case "cell":
              cells.push(data["cell"] as Cell)
              break
            case "clarification":
              append(turn.element, [
                this.clarification(
                  data as unknown as { question: string; choices: ReadonlyArray<{ id: string; label: string }> }
                )
              ])
              break
            case "done":
              if (data["status"] !== "completed") failed = (data["error"] as string | undefined) ?? this.strings.failed
          }
          turn.render(text, assets, cells)
        }
      )
      if (failed !== undefined) throw new Error(failed)
      turn.finish(messageId)
      this.status.textContent = this.strings.answered
      this.dispatchEvent(
        new CustomEvent("answer", {
          detail: { chat_id: this.chatId, message_id: messageId, text },
          bubbles: true,
          composed: true
        })
      )
      void connection.json<{ chats: ReadonlyArray<ChatSummary> }>("v2/chats?limit=20").then(
        (chats) => this.showChats(chats.chats),
        () => undefined
      )
    } catch (error) {
      turn.finish(undefined)
      this.fail(error)
    } finally {
      this.busy = false
      this.askButton.disabled = false
    }
  }

  /** The question asked back, with a button per choice. */
  private clarification(
    event: { question: string; choices: ReadonlyArray<{ id: string; label: string }> }
  ): HTMLElement {
    const box = h(
      "div",
      { class: "choices", part: "clarification", role: "group", "aria-label": this.strings.choose },
      h("p", {}, event.question)
    )
    for (const choice of event.choices) {
      const button = h("button", { type: "button", part: "choice" }, choice.label)
      button.addEventListener("click", () => {
        // A clarification is answered once.
        for (const other of box.querySelectorAll("button")) other.disabled = true
        void this.ask({ choice: choice.id })
      })
      append(box, [button])
    }
    return box
  }
}
