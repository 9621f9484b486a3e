/**
 * A round-robin reverse proxy on loopback, as an operator's load balancer in front of several server
 * processes: each request goes to the next backend in turn; a backend that refuses the connection
 * (its process is gone) is passed over for the next one, as nginx's `proxy_next_upstream error`
 * does; responses stream through as they come (SSE is never buffered), and a client that hangs up
 * closes the request to the backend.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface Proxy {
  readonly url: string
  readonly close: () => Promise<void>
}

const refused = (error: NodeJS.ErrnoException) => error.code === "ECONNREFUSED" || error.code === "ECONNRESET"

export const roundRobin = async (backends: ReadonlyArray<string>): Promise<Proxy> => {
  let next = 0
  const forward = (backend: string, req: http.IncomingMessage, body: Buffer, res: http.ServerResponse) =>
    new Promise<void>((resolve, reject) => {
      const target = new URL(backend)
      const upstream = http.request({
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host, "x-forwarded-for": req.socket.remoteAddress ?? "" }
      }, (response) => {
        res.writeHead(response.statusCode ?? 502, response.headers)
        response.pipe(res)
        response.on("error", () => res.destroy())
        resolve()
      })
      let answered = false
      upstream.on("response", () => (answered = true))
      upstream.on("error", (error: NodeJS.ErrnoException) => (answered ? res.destroy() : reject(error)))
      res.on("close", () => upstream.destroy())
      upstream.end(body)
    })
  const server = http.createServer(async (req, res) => {
    // Held whole so that it can go to the next backend (the tests' bodies are small).
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    for (let attempt = 0; attempt < backends.length; attempt++) {
      const backend = backends[next++ % backends.length]!
      try {
        return await forward(backend, req, body, res)
      } catch (error) {
        if (!refused(error as NodeJS.ErrnoException)) break
      }
    }
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end("no backend answered")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
