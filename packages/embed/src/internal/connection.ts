/**
 * The widget's connection to Sightline: its base URL and the end user's session, which the host's
 * `getToken()` mints (`POST /v2/embed/sessions` on the host's backend). A token is renewed before it
 * ends, and again when the server says it has ended (401: a clock that disagrees, a revoked key), so
 * no request fails for a token the host would renew. There is no refresh token in the browser.
 */
import { createParser } from "eventsource-parser"

/** What the host's `getToken()` resolves to: the mint response. */
export interface MintedToken {
  readonly token: string
  readonly expires_at: string
}

/** The host's token function. */
export type GetToken = () => Promise<MintedToken>

/** A failed request, with the server's envelope message. */
export class RequestError extends Error {
  constructor(readonly status: number, message: string) {
    super(message)
  }
}

/** Renew this long before the token's end. */
const marginMillis = 30_000

/** One stream event with its id. */
export interface StreamEvent {
  readonly id: string | undefined
  readonly data: { readonly type: string } & Record<string, unknown>
}

export class Connection {
  private current: MintedToken | undefined
  private pending: Promise<MintedToken> | undefined

  private readonly base: string

  constructor(
    server: string,
    private readonly getToken: GetToken,
    /** Told each time the token is renewed because the server refused it. */
    private readonly onExpired: () => void
  ) {
    // Paths are relative (`v2/chats`), so a server under a path prefix keeps it.
    this.base = server.endsWith("/") ? server : `${server}/`
  }

  private renew(): Promise<MintedToken> {
    // Two requests at once share one renewal.
    this.pending ??= this.getToken().then(
      (minted) => {
        this.current = minted
        this.pending = undefined
        return minted
      },
      (error: unknown) => {
        this.pending = undefined
        throw error
      }
    )
    return this.pending
  }

  /** A token that is not about to end. */
  async token(): Promise<string> {
    const current = this.current
    if (current !== undefined && Date.parse(current.expires_at) - Date.now() > marginMillis) return current.token
    return (await this.renew()).token
  }

  /** A request with the session; a 401 renews the token once and tries again. */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const send = async () =>
      fetch(new URL(path, this.base), {
        ...init,
        headers: { ...init.headers as Record<string, string>, authorization: `Bearer ${await this.token()}` }
      })
    const response = await send()
    if (response.status !== 401) return response
    this.current = undefined
    this.onExpired()
    return send()
  }

  /** A JSON request; a status other than 2xx is a `RequestError` with the server's message. */
  async json<A>(path: string, init: RequestInit & { readonly body?: string } = {}): Promise<A> {
    const response = await this.fetch(path, {
      ...init,
      headers: {
        ...init.headers as Record<string, string>,
        ...(init.body === undefined ? {} : { "content-type": "application/json" })
      }
    })
    const text = await response.text()
    const body = text === "" ? undefined : JSON.parse(text)
    if (!response.ok) throw new RequestError(response.status, body?.error?.message ?? `${response.status}`)
    return body as A
  }

  /**
   * Reads a chat's Server-Sent Events until `done`. A connection that drops before `done` is followed
   * again (`GET /v2/chats/{id}/stream` with `Last-Event-ID`, a renewed token if need be), so no event
   * is lost or seen twice.
   */
  async stream(first: () => Promise<Response>, onEvent: (event: StreamEvent) => void): Promise<void> {
    let chatId: string | undefined
    let lastId: string | undefined
    let done = false
    let response = await first()
    for (let attempt = 0; attempt < 5 && !done; attempt++) {
      if (!response.ok || response.body === null) {
        const text = await response.text()
        let message = `${response.status}`
        try {
          message = JSON.parse(text).error.message
        } catch {
          // Not the envelope: the status says enough.
        }
        throw new RequestError(response.status, message)
      }
      const parser = createParser({
        onEvent: (message) => {
          const data = JSON.parse(message.data) as StreamEvent["data"]
          if (data.type === "metadata") chatId = data["chat_id"] as string
          if (message.id !== undefined) lastId = message.id
          if (data.type === "done") done = true
          onEvent({ id: message.id, data })
        }
      })
      try {
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
        for (;;) {
          const { done: ended, value } = await reader.read()
          if (ended) break
          parser.feed(value)
        }
      } catch {
        // The connection dropped: followed below.
      }
      if (done || chatId === undefined) break
      const from = lastId
      response = await this.fetch(`v2/chats/${chatId}/stream`, {
        headers: { accept: "text/event-stream", ...(from === undefined ? {} : { "last-event-id": from }) }
      })
    }
  }
}
