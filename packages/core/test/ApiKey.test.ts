import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ApiKey from "../src/ApiKey.js"
import { ApiKeyId, MemberId, OrganizationId, RoleId } from "../src/Ids.js"
import { SecretHash } from "../src/Secret.js"

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const roleA = RoleId.make(id(101))
const roleB = RoleId.make(id(102))
const owner = MemberId.make(id(201))
const admin = MemberId.make(id(202))
const org = OrganizationId.make(id(301))
const hashOf = (c: string) => SecretHash.make(c.repeat(64))
const now = DateTime.unsafeMake("2026-03-01T12:00:00.000Z")

const decodeBody = Schema.decodeUnknownEither(ApiKey.CreateApiKey)
const errorOf = (body: unknown): string => {
  const result = decodeBody(body)
  return Either.isLeft(result) ? result.left.message : "decoded"
}
const accepts = (body: unknown) => expect(errorOf(body)).toBe("decoded")

const minted = (overrides: Partial<ApiKey.MintInput> = {}) =>
  ApiKey.mint({
    id: ApiKeyId.make(id(1)),
    organizationId: org,
    memberId: owner,
    createdBy: owner,
    secretHash: hashOf("a"),
    now,
    assumedRoles: [roleA, roleB],
    ...overrides
  })

describe("ApiKey.CreateApiKey", () => {
  it("requires inheritAllRoles when assumedRoles is empty or absent", () => {
    for (
      const body of [{}, { assumedRoles: [] }, { inheritAllRoles: false }, { assumedRoles: [], inheritAllRoles: false }]
    ) {
      expect(errorOf(body)).toContain("inheritAllRoles must be true when assumedRoles is empty")
    }
    accepts({ inheritAllRoles: true })
    accepts({ assumedRoles: [], inheritAllRoles: true })
    accepts({ assumedRoles: [roleA] })
    accepts({ assumedRoles: [roleA], inheritAllRoles: false })
  })

  it("rejects inheritAllRoles together with a non-empty assumedRoles", () => {
    expect(errorOf({ assumedRoles: [roleA], inheritAllRoles: true })).toContain(
      "inheritAllRoles cannot be combined with a non-empty assumedRoles"
    )
  })

  it("expirySeconds is a positive integer of at most ten years", () => {
    for (const expirySeconds of [0, -1, 1.5, ApiKey.MAX_EXPIRY_SECONDS + 1, "3600"]) {
      expect(errorOf({ inheritAllRoles: true, expirySeconds })).not.toBe("decoded")
    }
    expect(errorOf({ inheritAllRoles: true, expirySeconds: 0 })).toContain("expirySeconds must be a positive integer")
    expect(errorOf({ inheritAllRoles: true, expirySeconds: ApiKey.MAX_EXPIRY_SECONDS + 1 })).toContain("10 years")
    accepts({ inheritAllRoles: true, expirySeconds: 1 })
    accepts({ inheritAllRoles: true, expirySeconds: ApiKey.MAX_EXPIRY_SECONDS })
  })

  it("clientId must be a JSON-encoded object string, kept exactly as sent", () => {
    const text = "{ \"tenant\": \"acme\", \"region\": [\"eu\"] }"
    const decoded = decodeBody({ inheritAllRoles: true, clientId: text })
    expect(Either.map(decoded, (body) => body.clientId)).toEqual(Either.right(text))
    for (const clientId of ["[1]", "\"acme\"", "null", "1", "not json", "", { tenant: "acme" }]) {
      expect(errorOf({ inheritAllRoles: true, clientId })).not.toBe("decoded")
    }
    expect(errorOf({ inheritAllRoles: true, clientId: "[1]" })).toContain(
      "clientId must be a JSON-encoded object string"
    )
    const tooLong = JSON.stringify({ pad: "x".repeat(ApiKey.CLIENT_ID_MAX_LENGTH) })
    expect(errorOf({ inheritAllRoles: true, clientId: tooLong })).toContain("clientId must be at most")
  })

  it("bounds name length, and rejects repeated, malformed or too many roles", () => {
    accepts({ inheritAllRoles: true, name: "x".repeat(ApiKey.NAME_MAX_LENGTH) })
    expect(errorOf({ inheritAllRoles: true, name: "x".repeat(ApiKey.NAME_MAX_LENGTH + 1) })).toContain(
      "name must be at most"
    )
    expect(errorOf({ assumedRoles: [roleA, roleA] })).toContain("assumedRoles must not repeat a role")
    expect(errorOf({ assumedRoles: ["admin"] })).not.toBe("decoded")
    const many = Array.from({ length: ApiKey.MAX_ASSUMED_ROLES + 1 }, (_, i) => id(1000 + i))
    expect(errorOf({ assumedRoles: many })).toContain(`at most ${ApiKey.MAX_ASSUMED_ROLES} roles`)
    accepts({ assumedRoles: many.slice(1) })
  })

  it("targetMemberId is a UUID and booleans are booleans", () => {
    expect(errorOf({ inheritAllRoles: true, targetMemberId: "bob" })).not.toBe("decoded")
    expect(errorOf({ inheritAllRoles: true, fullMemberAccess: "true" })).not.toBe("decoded")
    expect(errorOf({ inheritAllRoles: "true" })).not.toBe("decoded")
    accepts({ inheritAllRoles: true, targetMemberId: owner, fullMemberAccess: true, name: "ci" })
  })
})

describe("ApiKey lifecycle", () => {
  it("mint defaults to a 90-day expiry, empty name and client metadata, and no flags", () => {
    const key = minted()
    expect(DateTime.distance(now, key.expires_at)).toBe(Duration.toMillis(Duration.days(90)))
    expect(Duration.toMillis(ApiKey.DEFAULT_EXPIRY)).toBe(90 * 24 * 60 * 60 * 1000)
    expect(key.name).toBe("")
    expect(key.client_id).toBe("")
    expect(key.inherit_all_roles).toBe(false)
    expect(key.full_member_access).toBe(false)
    expect(key.revoked_at).toBeUndefined()
    expect(key.rotated_from).toBeUndefined()
    expect(ApiKey.statusAt(key, now)).toBe("active")
  })

  it("mint honours expirySeconds and the optional fields", () => {
    const key = minted({
      expirySeconds: 3600,
      name: "ci",
      clientId: "{\"t\":1}",
      fullMemberAccess: true,
      createdBy: admin
    })
    expect(DateTime.formatIso(key.expires_at)).toBe("2026-03-01T13:00:00.000Z")
    expect([key.name, key.client_id, key.full_member_access, key.created_by]).toEqual(["ci", "{\"t\":1}", true, admin])
  })

  it.prop("a key is active strictly before expires_at and expired from then on", [ApiKey.ExpirySeconds], ([ttl]) => {
    const key = minted({ expirySeconds: ttl })
    expect(ApiKey.statusAt(key, DateTime.add(key.expires_at, { millis: -1 }))).toBe("active")
    expect(ApiKey.statusAt(key, key.expires_at)).toBe("expired")
    expect(ApiKey.statusAt(key, DateTime.add(key.expires_at, { days: 1 }))).toBe("expired")
  })

  it("revoke stamps revoked_at; revoked wins over active and expired", () => {
    const key = minted({ expirySeconds: 60 })
    const revoked = Either.getOrThrow(ApiKey.revoke(key, now))
    expect(revoked.revoked_at).toEqual(now)
    expect(ApiKey.statusAt(revoked, now)).toBe("revoked")
    expect(ApiKey.statusAt(revoked, DateTime.add(now, { hours: 1 }))).toBe("revoked")
    expect(key.revoked_at).toBeUndefined()
  })

  it("revoking a revoked key is invalid_request", () => {
    const revoked = Either.getOrThrow(ApiKey.revoke(minted(), now))
    const again = ApiKey.revoke(revoked, DateTime.add(now, { minutes: 1 }))
    expect(Either.isLeft(again) && again.left.code).toBe("invalid_request")
    expect(Either.isLeft(again) && again.left.message).toBe("API key is already revoked")
  })

  it("an expired key can still be revoked", () => {
    const later = DateTime.add(now, { days: 91 })
    const key = minted()
    expect(ApiKey.statusAt(key, later)).toBe("expired")
    expect(Either.map(ApiKey.revoke(key, later), (k) => ApiKey.statusAt(k, later))).toEqual(Either.right("revoked"))
  })

  const rotateInput = (at: DateTime.Utc, overrides: Partial<ApiKey.RotateInput> = {}): ApiKey.RotateInput => ({
    newId: ApiKeyId.make(id(2)),
    newSecretHash: hashOf("b"),
    now: at,
    rotatedBy: admin,
    ...overrides
  })

  it("rotate revokes the key and mints one with the same scope, metadata and TTL", () => {
    const key = minted({
      expirySeconds: 7200,
      name: "embed",
      clientId: "{\"tenant\":\"acme\"}",
      fullMemberAccess: true
    })
    const at = DateTime.add(now, { minutes: 30 })
    const { replacement, revoked } = Either.getOrThrow(ApiKey.rotate(key, rotateInput(at)))
    expect(revoked.id).toBe(key.id)
    expect(revoked.revoked_at).toEqual(at)
    expect(replacement.id).toBe(id(2))
    expect(replacement.secret_hash).toBe(hashOf("b"))
    expect(replacement.created_by).toBe(admin)
    expect(replacement.created_at).toEqual(at)
    expect(replacement.rotated_from).toBe(key.id)
    expect(replacement.revoked_at).toBeUndefined()
    expect(DateTime.distance(at, replacement.expires_at)).toBe(7200 * 1000)
    const same = (k: ApiKey.ApiKeyRecord) => [
      k.organization_id,
      k.member_id,
      k.name,
      k.client_id,
      k.assumed_roles,
      k.inherit_all_roles,
      k.full_member_access
    ]
    expect(same(replacement)).toEqual(same(key))
    expect(ApiKey.statusAt(replacement, at)).toBe("active")
  })

  it("rotate keeps the legacy All-roles flag and accepts an explicit TTL", () => {
    const key = minted({ inheritAllRoles: true })
    const { replacement } = Either.getOrThrow(ApiKey.rotate(key, rotateInput(now, { expirySeconds: 60 })))
    expect(replacement.inherit_all_roles).toBe(true)
    expect(DateTime.distance(now, replacement.expires_at)).toBe(60_000)
  })

  it("rotating a revoked key is invalid_request", () => {
    const revoked = Either.getOrThrow(ApiKey.revoke(minted(), now))
    const result = ApiKey.rotate(revoked, rotateInput(now))
    expect(Either.isLeft(result) && result.left._tag).toBe("InvalidRequest")
    expect(Either.isLeft(result) && result.left.message).toBe("cannot rotate a revoked API key")
  })

  it("an expired key can be rotated into an active one", () => {
    const later = DateTime.add(now, { days: 100 })
    const { replacement, revoked } = Either.getOrThrow(ApiKey.rotate(minted(), rotateInput(later)))
    expect(ApiKey.statusAt(revoked, later)).toBe("revoked")
    expect(ApiKey.statusAt(replacement, later)).toBe("active")
    expect(DateTime.distance(later, replacement.expires_at)).toBe(Duration.toMillis(ApiKey.DEFAULT_EXPIRY))
  })
})

describe("ApiKey wire shapes", () => {
  it("toWire derives status and never exposes the hash, organization or internal links", () => {
    const key = minted({ rotatedFrom: ApiKeyId.make(id(9)) })
    const json = Schema.encodeSync(ApiKey.ApiKey)(ApiKey.toWire(key, now))
    expect(json).toEqual({
      id: id(1),
      member_id: owner,
      name: "",
      client_id: "",
      assumed_roles: [roleA, roleB],
      inherit_all_roles: false,
      full_member_access: false,
      status: "active",
      created_at: "2026-03-01T12:00:00.000Z",
      expires_at: "2026-05-30T12:00:00.000Z"
    })
    const revoked = Either.getOrThrow(ApiKey.revoke(key, now))
    const later = DateTime.add(now, { days: 200 })
    const revokedJson = Schema.encodeSync(ApiKey.ApiKey)(ApiKey.toWire(revoked, later))
    expect(revokedJson.status).toBe("revoked")
    expect(revokedJson.revoked_at).toBe("2026-03-01T12:00:00.000Z")
    expect(ApiKey.toWire(key, later).status).toBe("expired")
  })

  it("the create and rotate results encode the secret and the record", () => {
    const apiKey = ApiKey.toWire(minted(), now)
    const created = Schema.encodeSync(ApiKey.CreateApiKeyResult)({ key: "s3cr3t", api_key: apiKey })
    expect(created.key).toBe("s3cr3t")
    expect(created.api_key.id).toBe(id(1))
    const rotated = Schema.decodeUnknownSync(ApiKey.RotateApiKeyResult)({
      key: "s3cr3t",
      api_key: Schema.encodeSync(ApiKey.ApiKey)(apiKey),
      revoked_api_key_id: id(7)
    })
    expect(rotated.api_key).toEqual(apiKey)
    expect(Schema.decodeUnknownEither(ApiKey.RevokeApiKeyResult)({ id: "nope", success: true })._tag).toBe("Left")
  })

  it("ListApiKeys defaults to personal, non-revoked, 50 per page", () => {
    const decode = Schema.decodeUnknownEither(ApiKey.ListApiKeys)
    expect(decode({})).toEqual(Either.right({ scope: "personal", include_revoked: false, page_size: 50 }))
    expect(decode({ scope: "service_accounts", include_revoked: "true", page_size: "100", page_token: "abc" })).toEqual(
      Either.right({ scope: "service_accounts", include_revoked: true, page_size: 100, page_token: "abc" })
    )
    for (
      const query of [{ scope: "mine" }, { include_revoked: "yes" }, { page_size: "0" }, { page_size: "101" }, {
        page_size: "ten"
      }]
    ) {
      expect(Either.isLeft(decode(query))).toBe(true)
    }
  })
})
