/**
 * One rate limit across server processes over one PostgreSQL (the per-process behaviour is
 * `@sightline/http`'s own tests).
 */
import { describe, expect, it } from "@effect/vitest"
import { postgresUrl, randomPrefix, startServer } from "./utils/server.js"

describe("rate limiting across processes", () => {
  it("two servers over one PostgreSQL enforce one limit", async (context) => {
    const prefix = randomPrefix()
    const options = { rateLimitPerMinute: 4, prefix, store: { _tag: "Postgres" as const, url: postgresUrl } }
    let first
    try {
      first = await startServer("postgres", options)
    } catch (error) {
      if (process.env.CI === "true") throw error
      console.warn(`rate limiting across processes: PostgreSQL unreachable at ${postgresUrl}: skipped`)
      return context.skip()
    }
    const second = await startServer("postgres", options)
    try {
      const org = await first.newOrg()
      const statuses: Array<number> = []
      for (let i = 0; i < 6; i++) {
        const target = i % 2 === 0 ? first : second
        statuses.push((await target.request("/v2/playbooks", { key: org.key })).status)
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429])
    } finally {
      await second.stop({ keepTables: true })
      await first.stop()
    }
  })
})
