/**
 * A loopback HTTP server that plays a provider: each test scripts what it answers per request, and
 * the server records what it received and whether the client closed a response early.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}

export type Handler = (request: Received, response: http.ServerResponse, index: number) => unknown

export interface Loopback {
  readonly url: string
  readonly received: Array<Received>
  /** Resolves when a response was closed by the client before it ended. */
  readonly aborted: Promise<void>
  /** The connections clients opened so far. */
  readonly connections: () => number
  readonly close: () => Promise<void>
}

export const serve = async (handler: Handler): Promise<Loopback> => {
  const received: Array<Received> = []
  let onAbort: () => void = () => undefined
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve
  })
  const server = http.createServer((req, res) => {
    let data = ""
    req.on("data", (chunk) => {
      data += chunk
    })
    req.on("end", () => {
      const request = { path: req.url ?? "", headers: req.headers, body: data === "" ? undefined : JSON.parse(data) }
      received.push(request)
      res.on("close", () => {
        if (!res.writableEnded) onAbort()
      })
      void handler(request, res, received.length - 1)
    })
  })
  let connections = 0
  server.on("connection", () => {
    connections++
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    aborted,
    connections: () => connections,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** Starts an SSE response. */
export const startSse = (response: http.ServerResponse) => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  response.flushHeaders()
}

/** Writes one event (`data` as JSON unless it is a string). */
export const sse = (response: http.ServerResponse, data: unknown, event?: string) => {
  response.write(
    `${event === undefined ? "" : `event: ${event}\n`}data: ${
      typeof data === "string" ? data : JSON.stringify(data)
    }\n\n`
  )
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
