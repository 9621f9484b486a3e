/**
 * Reads a chat's Server-Sent Events over `fetch` (EventSource cannot send an Authorization header),
 * remembering the last event id, so a reload or a dropped connection resumes with `Last-Event-ID`
 * and every event arrives once.
 */
import { createParser } from "eventsource-parser"
import { request } from "./api.js"

export type ChatEvent =
  | { readonly type: "metadata"; readonly chat_id: string; readonly model: string; readonly id: string }
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "cell"; readonly cell: Cell }
  | { readonly type: "asset"; readonly asset: Asset }
  | ({ readonly type: "clarification" } & Clarification)
  | ({ readonly type: "plan" } & Plan)
  | { readonly type: "done"; readonly status: "completed" | "failed" | "cancelled"; readonly error?: string }

/** An investigation's plan: its steps, each a cell whose content is the step's title. */
export interface Plan {
  readonly title: string
  readonly steps: ReadonlyArray<{ readonly id: string; readonly title: string; readonly level: number }>
}

/** A question the answer asked back, with the choices to answer it by (`choice`). */
export interface Clarification {
  readonly question: string
  readonly choices: ReadonlyArray<{ readonly id: string; readonly label: string; readonly question: string }>
}

export interface Cell {
  readonly id: string
  readonly type: string
  readonly status: string
  readonly query?: string
  readonly code?: string
  readonly content?: string
  readonly output?: ReadonlyArray<string>
  readonly error?: string
  readonly execution_time_ms?: number
  readonly connector_id?: number
  /** How a semantic query read the question. */
  readonly reading?: { readonly text: string }
  /** The semantic query the step ran: what a pinned tile runs. */
  readonly semantic_query?: unknown
  /** The reviewed definition a trusted result came from. */
  readonly trusted_source?: {
    readonly kind: string
    readonly name: string
    readonly path: string
    readonly commit: string
  }
}

export interface Asset {
  readonly id?: string
  readonly name: string
  readonly type: string
  readonly content?: string
  readonly url?: string
  readonly cell_id?: string
}

const lastIdKey = (chatId: string) => `sightline:last-event:${chatId}`

/** The last event id this tab saw of a chat (kept across reloads of the page). */
export const lastEventId = (chatId: string): string | undefined =>
  sessionStorage.getItem(lastIdKey(chatId)) ?? undefined

/** Reads events from `response` until it ends; returns whether `done` arrived. */
const read = async (
  response: Response,
  onEvent: (event: ChatEvent, id: string | undefined) => void,
  chatIdOf: () => string | undefined
): Promise<boolean> => {
  if (!response.ok || response.body === null) {
    throw new Error(`stream failed: ${response.status} ${await response.text()}`)
  }
  let done = false
  const parser = createParser({
    onEvent: (message) => {
      const event = JSON.parse(message.data) as ChatEvent
      const chatId = event.type === "metadata" ? event.chat_id : chatIdOf()
      if (message.id !== undefined && chatId !== undefined) sessionStorage.setItem(lastIdKey(chatId), message.id)
      if (event.type === "done") done = true
      onEvent(event, message.id)
    }
  })
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  for (;;) {
    const { done: ended, value } = await reader.read()
    if (ended) break
    parser.feed(value)
  }
  return done
}

/** A question as a form, with its files: tables become a connector of the asker's. */
const formOf = (
  body: Parameters<typeof ask>[0],
  files: ReadonlyArray<File>
): FormData => {
  const form = new FormData()
  if (body.question !== undefined) form.set("question", body.question)
  if (body.chat_id !== undefined) form.set("chat_id", body.chat_id)
  if (body.model !== undefined) form.set("model", body.model)
  if (body.tools !== undefined) form.set("tools", JSON.stringify(body.tools))
  if (body.connector_ids !== undefined && body.connector_ids.length > 0) {
    form.set("connector_ids", body.connector_ids.join(","))
  }
  for (const file of files) form.append("files", file, file.name)
  return form
}

/** Asks a question (with files, as a form), or answers a clarification by a choice, and streams the answer. */
export const ask = async (
  body: {
    readonly question?: string
    /** A choice of the chat's clarification, in place of the question. */
    readonly choice?: string
    readonly chat_id?: string
    readonly connector_ids?: ReadonlyArray<number>
    readonly model?: string
    readonly tools?: Readonly<Record<string, boolean>>
  },
  onEvent: (event: ChatEvent) => void,
  signal: AbortSignal,
  files: ReadonlyArray<File> = []
): Promise<boolean> => {
  let chatId = body.chat_id
  const response = await request("v2/chats/stream", {
    method: "POST",
    headers: files.length === 0
      ? { "content-type": "application/json", accept: "text/event-stream" }
      : { accept: "text/event-stream" },
    body: files.length === 0 ? JSON.stringify(body) : formOf(body, files),
    signal
  })
  return read(response, (event) => {
    if (event.type === "metadata") chatId = event.chat_id
    onEvent(event)
  }, () => chatId)
}

/** Follows a chat's current answer after event `from` (from the run's start without one). */
export const follow = async (
  chatId: string,
  onEvent: (event: ChatEvent) => void,
  signal: AbortSignal,
  from: string | undefined
): Promise<boolean> => {
  const response = await request(`v2/chats/${chatId}/stream`, {
    headers: { accept: "text/event-stream", ...(from === undefined ? {} : { "last-event-id": from }) },
    signal
  })
  return read(response, onEvent, () => chatId)
}
