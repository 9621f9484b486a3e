import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { MemberId, OrganizationId, RoleId } from "../src/Ids.js"
import { Email } from "../src/Member.js"
import * as Role from "../src/Role.js"
import * as ServiceAccount from "../src/ServiceAccount.js"

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const org = OrganizationId.make(id(1))
const now = DateTime.unsafeMake("2026-01-01T00:00:00.000Z")
const accountId = MemberId.make("3f2a9c1e-7b4d-4e8f-9a01-5c6d7e8f9a0b")

const decodes = <A, I>(schema: Schema.Schema<A, I>, input: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(input))

describe("ServiceAccount.emailFor", () => {
  it("slugs the name and appends the last 12 hex digits of the id", () => {
    expect(ServiceAccount.emailFor("Nightly Exporter", accountId))
      .toBe("nightly-exporter-5c6d7e8f9a0b@service-accounts.sightline.local")
    expect(ServiceAccount.emailFor("  Déjà Vu -- Bot!  ", accountId))
      .toBe("deja-vu-bot-5c6d7e8f9a0b@service-accounts.sightline.local")
  })

  it("caps the slug at 40 characters and falls back when nothing is left", () => {
    const long = ServiceAccount.emailFor("x".repeat(39) + " tail", accountId)
    expect(long).toBe(`${"x".repeat(39)}-5c6d7e8f9a0b@service-accounts.sightline.local`)
    expect(ServiceAccount.emailFor("🤖 ✨", accountId)).toBe(
      "service-account-5c6d7e8f9a0b@service-accounts.sightline.local"
    )
  })

  it.prop(
    "always yields a valid address, distinct for distinct ids",
    [
      FastCheck.string({ minLength: 1, maxLength: 120 }),
      FastCheck.uuid({ version: 4 }),
      FastCheck.uuid({ version: 4 })
    ],
    ([name, a, b]) => {
      const first = ServiceAccount.emailFor(name, MemberId.make(a))
      expect(decodes(Email, first)).toBe(true)
      expect(first === ServiceAccount.emailFor(name, MemberId.make(b))).toBe(a.slice(-12) === b.slice(-12))
    }
  )
})

describe("ServiceAccount.CreateServiceAccount", () => {
  it("requires a name and role ids that are UUIDs (an empty list included)", () => {
    expect(decodes(ServiceAccount.CreateServiceAccount, { name: "bot", role_ids: [id(5)] })).toBe(true)
    expect(decodes(ServiceAccount.CreateServiceAccount, { name: "bot", role_ids: [] })).toBe(true)
    expect(decodes(ServiceAccount.CreateServiceAccount, { name: "bot", role_ids: ["admin"] })).toBe(false)
    expect(decodes(ServiceAccount.CreateServiceAccount, { name: "bot" })).toBe(false)
    expect(decodes(ServiceAccount.CreateServiceAccount, { name: "", role_ids: [] })).toBe(false)
  })
})

describe("ServiceAccount.make", () => {
  it("builds a service-account member with its generated address", () => {
    const account = ServiceAccount.make({
      id: accountId,
      organizationId: org,
      request: { name: "Exporter", description: "Nightly export", role_ids: [] },
      now
    })
    expect(account).toMatchObject({
      id: accountId,
      organization_id: org,
      name: "Exporter",
      description: "Nightly export",
      email: "exporter-5c6d7e8f9a0b@service-accounts.sightline.local",
      is_service_account: true,
      is_scim_managed: false,
      created_at: now
    })
    expect("deleted_at" in account).toBe(false)
  })

  it("lists an account with an empty description when none was given and sorted role names", () => {
    const account = ServiceAccount.make({
      id: accountId,
      organizationId: org,
      request: { name: "Bot", role_ids: [] },
      now
    })
    expect("description" in account).toBe(false)
    const roles = ["writer", "reader"].map((name, i) =>
      Role.make({ id: RoleId.make(id(30 + i)), organizationId: org, request: { name }, now })
    )
    expect(ServiceAccount.toListItem(account, roles)).toEqual({
      id: accountId,
      name: "Bot",
      description: "",
      email: account.email,
      roles: ["reader", "writer"],
      created_at: now
    })
  })
})
