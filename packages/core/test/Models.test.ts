import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ApiKeyId, ModelNumber } from "../src/Ids.js"
import * as Members from "../src/Members.js"
import * as Model from "../src/Model.js"
import * as Models from "../src/Models.js"
import * as Organizations from "../src/Organizations.js"
import * as Policy from "../src/Policy.js"
import * as Role from "../src/Role.js"
import * as Roles from "../src/Roles.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

// A catalogue of three models with `offline` (1) as the organization's default.
const catalogue = Model.layerStatic([
  ...Model.testEntries,
  new Model.CatalogueEntry({ number: ModelNumber.make(3), id: "large", provider: "openai", supports_fast_mode: false })
], "offline")

const TestLayer = Layer.mergeAll(Organizations.layer, Members.layer, Roles.layer, Models.layer).pipe(
  Layer.provideMerge(catalogue),
  Layer.provideMerge(Memory.layer)
)

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) =>
  Effect.provide(effect, TestLayer)

const models = (...numbers: Array<number>) => numbers.map((n) => ModelNumber.make(n))

const setup = Effect.gen(function*() {
  const { admin, created, org } = yield* Fixtures.organizationWithAdmin()
  const { member_id: bobId } = yield* (yield* Members.Members).invite(admin, {
    email: "bob@acme.example",
    role: "member"
  })
  return { created, org, admin, bobId }
})

// Bob keeps only the given custom role, configured by `update`.
const onlyRole = (update: Role.UpdateRole) =>
  Effect.gen(function*() {
    const { admin, bobId, created, org } = yield* setup
    const members = yield* Members.Members
    const role = yield* (yield* Roles.Roles).create(admin, { name: "Restricted", permissions: ["chat:read"] })
    yield* (yield* Roles.Roles).update(admin, role.id, update)
    yield* members.assignRole(admin, bobId, { roleId: role.id })
    yield* members.unassignRole(admin, bobId, created.roles.member.id)
    return { admin, org, bobId, role, created }
  })

const listed = (response: Model.ModelsResponse) => response.models.map((m) => [m.id, m.default])

describe("Models.list", () => {
  it.effect("lists the whole catalogue in order, with the organization's default, for unrestricted roles", () =>
    run(Effect.gen(function*() {
      const { admin } = yield* setup
      const response = yield* (yield* Models.Models).list(admin)
      expect(response.models[1]).toEqual(
        new Model.Model({
          id: "offline-fast",
          number: ModelNumber.make(2),
          provider: "offline",
          supports_fast_mode: true,
          default: false
        })
      )
      expect(listed(response)).toEqual([["offline", true], ["offline-fast", false], ["large", false]])
    })))

  it.effect("narrows to the role's allow-list; the default falls back to the first allowed model", () =>
    run(Effect.gen(function*() {
      const { bobId, org } = yield* onlyRole({ allowed_model_ids: models(3, 2) })
      const response = yield* (yield* Models.Models).list(yield* Fixtures.principal(org, bobId))
      expect(listed(response)).toEqual([["offline-fast", true], ["large", false]])
    })))

  it.effect("marks the role's default model", () =>
    run(Effect.gen(function*() {
      const { bobId, org } = yield* onlyRole({ default_model_id: 3 })
      const response = yield* (yield* Models.Models).list(yield* Fixtures.principal(org, bobId))
      expect(listed(response)).toEqual([["offline", false], ["offline-fast", false], ["large", true]])
    })))

  it.effect("combines roles: a role without a list allows every model", () =>
    run(Effect.gen(function*() {
      const { admin, bobId, created, org, role } = yield* onlyRole({ allowed_model_ids: models(2) })
      yield* (yield* Members.Members).assignRole(admin, bobId, { roleId: created.roles.member.id })
      const session = yield* Fixtures.principal(org, bobId)
      expect(listed(yield* (yield* Models.Models).list(session))).toHaveLength(3)
      // A key scoped to the restricted role alone sees only its list.
      const key = Policy.ApiKey({
        keyId: ApiKeyId.make("0a0b0c0d-1d0b-4c55-9d1e-3f4a5b6c7d8e"),
        assumedRoleIds: [role.id],
        inheritAllRoles: false,
        fullMemberAccess: false
      })
      expect(listed(yield* (yield* Models.Models).list(yield* Fixtures.principal(org, bobId, key))))
        .toEqual([["offline-fast", true]])
    })))

  it.effect("answers an empty list to a caller with no roles, and Unauthenticated to a deleted member", () =>
    run(Effect.gen(function*() {
      const { admin, bobId, created, org } = yield* setup
      yield* (yield* Members.Members).unassignRole(admin, bobId, created.roles.member.id)
      const bob = yield* Fixtures.principal(org, bobId)
      expect(yield* (yield* Models.Models).list(bob)).toEqual({ models: [] })
      const error = yield* Effect.flip((yield* Models.Models).list({ ...bob, deleted: true }))
      expect(error._tag).toBe("Unauthenticated")
    })))
})
