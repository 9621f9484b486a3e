import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Host from "../src/Host.js"

describe("Sightline embedded in a host's node:http server", () => {
  let host: Host.Host
  beforeAll(async () => {
    host = await Host.start()
  })
  afterAll(() => host.close())

  it("serves the host's own route and Sightline's beside it", async () => {
    const own = await fetch(`${host.url}/host`)
    expect(await own.text()).toBe("the host's own page")
    expect(await (await fetch(`${host.url}/healthz`)).json()).toEqual({ status: "ok" })

    const auth = { authorization: `Bearer ${host.adminKey}` }
    const created = await fetch(`${host.url}/v2/playbooks`, { method: "POST", headers: auth })
    expect(created.status).toBe(201)
    const { id } = (await created.json()) as { id: string }
    const updated = await fetch(`${host.url}/v2/playbooks/${id}`, {
      method: "PATCH",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "From the host" })
    })
    expect(updated.status).toBe(200)
    expect(((await updated.json()) as any).name).toBe("From the host")
    const list: any = await (await fetch(`${host.url}/v2/playbooks`, { headers: auth })).json()
    expect(list.total_count).toBe(1)

    const refused = await fetch(`${host.url}/v2/playbooks`)
    expect(refused.status).toBe(401)
    expect(((await refused.json()) as any).error.code).toBe("unauthenticated")
    expect(refused.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })
})
