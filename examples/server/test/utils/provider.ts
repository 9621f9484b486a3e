/**
 * A scripted OpenAI-compatible Chat Completions server on loopback: each request gets the next
 * scripted turn, streamed as real `chat.completion.chunk`s (with a usage chunk when asked for). Tests see what the agent sent and when
 * the agent closed a response early.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

/** A scripted turn: text (streamed in pieces), tool calls, or a stream that never ends. */
export type Turn =
  | { readonly text: string; readonly delayMs?: number }
  | {
    readonly toolCalls: ReadonlyArray<{ readonly name: string; readonly arguments: unknown }>
    /** Waits this long before answering (a slow model). */
    readonly delayMs?: number
  }
  | { readonly endless: true }

export interface ScriptedProvider {
  readonly url: string
  readonly requests: Array<any>
  /** The headers of each request, in order. */
  readonly headers: Array<http.IncomingHttpHeaders>
  /** Times (ms since epoch) at which a response was closed by the client before it ended. */
  readonly aborts: Array<number>
  /** When the server wrote each text piece of the latest text turn (ms since epoch). */
  readonly close: () => Promise<void>
}

const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${
    JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })
  }\n\n`

export const start = async (script: (request: any, index: number) => Turn): Promise<ScriptedProvider> => {
  const requests: Array<any> = []
  const headers: Array<http.IncomingHttpHeaders> = []
  const aborts: Array<number> = []
  const server = http.createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", async () => {
      if (req.url?.endsWith("/models")) {
        res.writeHead(200, { "content-type": "application/json" })
        return res.end(JSON.stringify({ data: [{ id: "scripted" }] }))
      }
      const request = JSON.parse(body)
      requests.push(request)
      headers.push(req.headers)
      const turn = script(request, requests.length - 1)
      res.on("close", () => {
        if (!res.writableEnded) aborts.push(Date.now())
      })
      res.writeHead(200, { "content-type": "text/event-stream" })
      if ("endless" in turn) {
        while (!res.destroyed) {
          res.write(chunk({ content: "… " }))
          await new Promise((r) => setTimeout(r, 50))
        }
        return
      }
      if ("toolCalls" in turn) {
        if (turn.delayMs !== undefined) await new Promise((r) => setTimeout(r, turn.delayMs))
        turn.toolCalls.forEach((call, index) => {
          const args = JSON.stringify(call.arguments)
          const half = Math.floor(args.length / 2)
          res.write(
            chunk({
              tool_calls: [{
                index,
                id: `call_${requests.length}_${index}`,
                type: "function",
                function: { name: call.name, arguments: args.slice(0, half) }
              }]
            })
          )
          res.write(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }))
        })
        res.write(chunk({}, "tool_calls"))
      } else {
        for (const piece of turn.text.match(/\S+\s*/g) ?? []) {
          res.write(chunk({ content: piece }))
          if (turn.delayMs !== undefined) await new Promise((r) => setTimeout(r, turn.delayMs))
        }
        res.write(chunk({}, "stop"))
      }
      // The usage chunk the API sends last when the request asks for it: 10 tokens per message in, 3 out.
      if (request.stream_options?.include_usage === true) {
        res.write(`data: ${
          JSON.stringify({
            object: "chat.completion.chunk",
            choices: [],
            usage: { prompt_tokens: request.messages.length * 10, completion_tokens: 3 }
          })
        }\n\n`)
      }
      res.write("data: [DONE]\n\n")
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    headers,
    aborts,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** The catalogue of a server whose default model is the scripted one. */
export const catalogue = JSON.stringify([
  { id: "scripted", number: 5, provider: "openai-compatible", default: true },
  { id: "offline", number: 1, provider: "offline" }
])
