import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { WebSearch } from "@sightline/core/WebSearch"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Searxng from "../src/Searxng.js"

// A loopback instance answering as SearXNG's JSON API does (403 when JSON is not enabled).
let server: http.Server
let base = ""
const queries: Array<string> = []
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x")
    queries.push(`${url.pathname}?${url.searchParams.toString()}`)
    if (url.searchParams.get("q") === "forbidden") {
      res.writeHead(403)
      return res.end()
    }
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify({
      query: url.searchParams.get("q"),
      results: Array.from(
        { length: 8 },
        (_, i) => ({ title: `T${i}`, url: `https://r${i}.test/`, content: `C${i}`, engine: "x" })
      )
    }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

it.live("asks the instance for JSON and keeps the first results; says why a search failed", () =>
  Effect.gen(function*() {
    const search = yield* WebSearch
    const results = yield* search.search("sales tax 2025", 3)
    expect(results).toEqual([
      { title: "T0", url: "https://r0.test/", snippet: "C0" },
      { title: "T1", url: "https://r1.test/", snippet: "C1" },
      { title: "T2", url: "https://r2.test/", snippet: "C2" }
    ])
    expect(queries[0]).toBe("/search?q=sales+tax+2025&format=json")
    const refused = yield* Effect.flip(search.search("forbidden", 3))
    expect(refused.message).toContain("add json to search.formats")
    const unreachable = yield* Effect.flip(Searxng.make({ baseUrl: "http://127.0.0.1:1" }).search("x", 3))
    expect(unreachable.message).toMatch(/^web search failed/)
  }).pipe(Effect.provide(Layer.suspend(() => Searxng.layer({ baseUrl: base })))))
