import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Client from "../src/Client.js"
import * as HttpErrors from "../src/HttpErrors.js"
import { describeServer } from "./utils/server.js"

describeServer("the typed client", (server) => {
  it("creates and lists playbooks, and fails with the wire errors", async () => {
    const { key } = await server().newOrg()
    const program = Effect.gen(function*() {
      const client = yield* Client.make({ baseUrl: server().baseUrl, apiKey: key })
      const created = yield* client.playbooks.create()
      const updated = yield* client.playbooks.update({ path: { id: created.id }, payload: { name: "Typed" } })
      // Query parameters are the decoded type: defaults are explicit on the client side.
      const page = yield* client.playbooks.list({
        urlParams: { limit: 10, offset: 0, sort_by: "name", sort_direction: "asc" }
      })
      const missing = yield* Effect.flip(
        client.playbooks.get({ path: { id: crypto.randomUUID() as any }, urlParams: { limit: 20, offset: 0 } })
      )
      return { created, updated, page, missing }
    }).pipe(Effect.provide(FetchHttpClient.layer))
    const { created, missing, page, updated } = await Effect.runPromise(program)
    expect(created.status).toBe("draft")
    expect(updated.name).toBe("Typed")
    expect(page.total_count).toBe(1)
    expect(page.playbooks[0]!.id).toBe(created.id)
    expect(missing).toBeInstanceOf(HttpErrors.NotFound)
    expect((missing as HttpErrors.NotFound).error).toEqual({ code: "not_found", message: "Resource not found" })

    const refused = await Effect.runPromise(
      Effect.flatMap(
        Client.make({ baseUrl: server().baseUrl, apiKey: "nope" }),
        (client) =>
          Effect.flip(client.playbooks.list({
            urlParams: { limit: 10, offset: 0, sort_by: "name", sort_direction: "asc" }
          }))
      ).pipe(Effect.provide(FetchHttpClient.layer))
    )
    expect(refused).toBeInstanceOf(HttpErrors.Unauthenticated)
  })
})
