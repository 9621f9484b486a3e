import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { MemberId, OrganizationId, RoleId } from "../src/Ids.js"
import * as Member from "../src/Member.js"
import * as Role from "../src/Role.js"

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const org = OrganizationId.make(id(1))
const now = DateTime.unsafeMake("2026-01-01T00:00:00.000Z")

const decodes = <A, I>(schema: Schema.Schema<A, I>, input: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(input))

const { admin, member } = Role.systemRoles({
  organizationId: org,
  adminId: RoleId.make(id(10)),
  memberId: RoleId.make(id(11)),
  now
})
const role = (n: number, name: string) =>
  Role.make({ id: RoleId.make(id(n)), organizationId: org, request: { name }, now })

const human = new Member.Member({
  id: MemberId.make(id(2)),
  organization_id: org,
  email: "ada@example.com",
  name: "Ada",
  is_service_account: false,
  is_scim_managed: true,
  created_at: now
})

describe("Member.Email", () => {
  it("accepts ordinary addresses", () => {
    for (const email of ["ada@example.com", "first.last+tag@sub.example.co.uk", "x@service-accounts.sightline.local"]) {
      expect(decodes(Member.Email, email)).toBe(true)
    }
  })

  it("rejects what cannot be an address", () => {
    const tooLong = `${"a".repeat(250)}@example.com`
    for (
      const email of [
        "",
        "ada",
        "ada@",
        "@example.com",
        "ada@example",
        "ada@@example.com",
        "a da@example.com",
        " ada@example.com",
        "ada@example..com",
        "ada@.example.com",
        tooLong
      ]
    ) {
      expect(decodes(Member.Email, email)).toBe(false)
    }
  })
})

describe("Member.InviteMember", () => {
  it("takes a valid e-mail and one of the system role names", () => {
    expect(decodes(Member.InviteMember, { email: "ada@example.com", role: "member" })).toBe(true)
    expect(decodes(Member.InviteMember, { email: "ada@example.com", role: "admin" })).toBe(true)
    expect(decodes(Member.InviteMember, { email: "ada@example.com", role: "owner" })).toBe(false)
    expect(decodes(Member.InviteMember, { email: "not-an-address", role: "member" })).toBe(false)
    expect(decodes(Member.InviteMember, { email: "ada@example.com" })).toBe(false)
  })
})

describe("Member.DeleteMemberParams", () => {
  it("soft-deletes unless hard_delete is the string true", () => {
    const decode = Schema.decodeUnknownSync(Member.DeleteMemberParams)
    expect(decode({})).toEqual({ hard_delete: false })
    expect(decode({ hard_delete: "true" })).toEqual({ hard_delete: true })
    expect(decode({ hard_delete: "false" })).toEqual({ hard_delete: false })
    expect(decodes(Member.DeleteMemberParams, { hard_delete: "yes" })).toBe(false)
  })
})

describe("Member.toSummary", () => {
  it("lists role names once each in alphabetical order", () => {
    const summary = Member.toSummary(human, [role(20, "zeta"), member, role(21, "Alpha"), member])
    expect(summary.roles).toEqual(["Alpha", "member", "zeta"])
  })

  it("marks as admin exactly the holders of the admin system role", () => {
    expect(Member.toSummary(human, [member, admin]).is_admin).toBe(true)
    expect(Member.toSummary(human, [member]).is_admin).toBe(false)
    expect(Member.toSummary(human, [role(22, "admin")]).is_admin).toBe(false)
  })

  it("encodes to the GET /v2/members item shape", () => {
    expect(Schema.encodeSync(Member.MemberSummary)(Member.toSummary(human, [admin]))).toEqual({
      id: id(2),
      email: "ada@example.com",
      name: "Ada",
      roles: ["admin"],
      is_admin: true,
      is_service_account: false,
      is_scim_managed: true,
      created_at: "2026-01-01T00:00:00.000Z"
    })
  })
})
