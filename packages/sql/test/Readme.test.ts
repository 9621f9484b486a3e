/**
 * The "Using the library" example of `docs/library.md`, run as written against embedded PGlite, so the example
 * cannot drift from the code.
 */
import { describe, expect, it } from "@effect/vitest"
import { ApiKeys, Auditor, Auth, Organizations, OutboundEvents, Playbook, Playbooks, UseCases } from "@sightline/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { SqlStore } from "../src/index.js"

// README: start
// The ports: storage on embedded PGlite (in memory here; pass { dataDir } to keep the data), and the
// ports core implements itself (secret hashing, ids). Then the use cases over them (they share `Auth`,
// the audit trail's `Auditor`, and `OutboundEvents`, which queues what webhook endpoints receive).
const Ports = Layer.merge(SqlStore.layerPglite(), UseCases.layerCorePorts)
const Sightline = Layer.mergeAll(Organizations.layer, ApiKeys.layer, Playbooks.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Auth.layer, Auditor.layer, OutboundEvents.layer)),
  Layer.provideMerge(Ports)
)

const program = Effect.gen(function*() {
  const { admin, organization } = yield* Organizations.Organizations.pipe(
    Effect.flatMap((orgs) => orgs.create({ name: "Acme", adminEmail: "ada@acme.test" }))
  )
  const { key } = yield* ApiKeys.ApiKeys.pipe(
    Effect.flatMap((keys) => keys.bootstrap(organization.id, admin.id, "ops"))
  )
  // What the http layer does on every request: the bearer secret becomes a principal...
  const principal = yield* Auth.Auth.pipe(Effect.flatMap((auth) => auth.authenticateApiKey(key)))
  // ...and the use case enforces the policy engine for it.
  const playbooks = yield* Playbooks.Playbooks
  const created = yield* playbooks.create(principal)
  const query = Schema.decodeSync(Playbook.ListPlaybooksQuery)({}) // as GET /v2/playbooks decodes it
  return { created, page: yield* playbooks.list(principal, query) }
})
// README: end

describe("README example", () => {
  it.live(
    "creates an organization, authenticates its admin key and lists playbooks on PGlite",
    () =>
      Effect.gen(function*() {
        const { created, page } = yield* program
        expect(created.status).toBe("draft")
        expect(page.total_count).toBe(1)
        expect(page.playbooks.map((p) => p.id)).toEqual([created.id])
      }).pipe(Effect.provide(Sightline)),
    120_000
  )
})
