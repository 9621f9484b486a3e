import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as AuditLogRepo from "../src/AuditLogRepo.js"
import { OrganizationId } from "../src/Ids.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import * as Organizations from "../src/Organizations.js"
import * as Permission from "../src/Permission.js"
import * as RoleRepo from "../src/RoleRepo.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Organizations.layer.pipe(Layer.provideMerge(Memory.layer))

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) =>
  Effect.provide(effect, TestLayer)

describe("Organizations.create", () => {
  it.effect("creates the organization, its system roles and an admin holding admin, all stored", () =>
    run(Effect.gen(function*() {
      const service = yield* Organizations.Organizations
      const { admin, organization, roles } = yield* service.create({
        name: "  Acme  ",
        adminEmail: "Ada.Lovelace@acme.example",
        adminName: "Ada Lovelace"
      })
      expect(organization.name).toBe("Acme")
      expect(roles.admin).toMatchObject({ name: "admin", is_system: true, organization_id: organization.id })
      expect(roles.admin.permissions).toEqual(Permission.all)
      expect(roles.member).toMatchObject({ name: "member", is_system: true, organization_id: organization.id })
      expect(admin).toMatchObject({
        organization_id: organization.id,
        email: "Ada.Lovelace@acme.example",
        name: "Ada Lovelace",
        is_service_account: false
      })
      expect(yield* (yield* OrganizationRepo.OrganizationRepo).get(organization.id)).toEqual(Option.some(organization))
      expect(yield* (yield* RoleRepo.RoleRepo).list(organization.id)).toEqual([roles.admin, roles.member])
      const members = yield* MemberRepo.MemberRepo
      expect(yield* members.list(organization.id)).toEqual([admin])
      expect(yield* members.roleIds(organization.id, admin.id)).toEqual([roles.admin.id])
      // The first admin is recorded as a system action: nobody authenticated made it.
      const { items } = yield* (yield* AuditLogRepo.AuditLogRepo).list(organization.id, { limit: 10 })
      expect(items).toEqual([expect.objectContaining({
        action: "member.invite",
        auth_method: "system",
        resource_id: admin.id,
        details: { email: "Ada.Lovelace@acme.example", role: "admin" }
      })])
      expect(items[0]!.actor_id).toBeUndefined()
    })))

  it.effect("names the admin after the e-mail's local part when no name is given", () =>
    run(Effect.gen(function*() {
      const { admin } = yield* (yield* Organizations.Organizations).create({
        name: "Acme",
        adminEmail: "ops@acme.example"
      })
      expect(admin.name).toBe("ops")
    })))

  it.effect("rejects a malformed name or e-mail address and stores nothing", () =>
    run(Effect.gen(function*() {
      const service = yield* Organizations.Organizations
      const cases = [
        [{ name: "   ", adminEmail: "ada@acme.example" }, /^name: /],
        [{ name: "Acme", adminEmail: "not an address" }, /^adminEmail: must be an e-mail address$/],
        [{ name: "x".repeat(201), adminEmail: "ada@acme.example" }, /^name: /],
        [{ name: "Acme", adminEmail: "ada@acme.example", adminName: "" }, /^adminName: /]
      ] as const
      for (const [input, message] of cases) {
        const error = yield* Effect.flip(service.create(input))
        expect(error._tag).toBe("InvalidRequest")
        expect(error.message).toMatch(message)
      }
      expect(yield* service.list()).toEqual([])
    })))
})

describe("Organizations.get and list", () => {
  it.effect("read organizations back, oldest first; an unknown id is NotFound", () =>
    run(Effect.gen(function*() {
      const service = yield* Organizations.Organizations
      const first = yield* service.create({ name: "First", adminEmail: "a@first.example" })
      yield* TestClock.adjust("1 minute")
      const second = yield* service.create({ name: "Second", adminEmail: "a@second.example" })
      expect(yield* service.get(second.organization.id)).toEqual(second.organization)
      expect(yield* service.list()).toEqual([first.organization, second.organization])
      const error = yield* Effect.flip(service.get(OrganizationId.make("3f2a9c1e-7b4d-4e8f-9a01-5c6d7e8f9a0b")))
      expect([error._tag, error.message]).toEqual(["NotFound", "Resource not found"])
    })))
})
