import { expect, it } from "@effect/vitest"
import { Fixtures } from "@sightline/core/testing"
import * as Redacted from "effect/Redacted"
import * as Jose from "jose"
import { body, describeServer } from "./utils/server.js"

const secret = "a-test-secret-of-at-least-32-bytes!!"
const key = new TextEncoder().encode(secret)
const issuer = "https://idp.example.test"
const audience = "sightline"

const token = (
  claims: Record<string, unknown>,
  options: { exp?: string | number | null; iss?: string; aud?: string } = {}
) => {
  let jwt = new Jose.SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuedAt()
    .setIssuer(options.iss ?? issuer).setAudience(options.aud ?? audience)
  if (options.exp !== null) jwt = jwt.setExpirationTime(options.exp ?? "5m")
  return jwt.sign(key)
}

describeServer("JWT sessions (HS256)", (server) => {
  it("acts as the member a valid token names", async () => {
    const org = await server().newOrg()
    const jwt = await token({ sub: org.memberId, organization_id: org.organizationId })
    const created = await server().request("/v2/playbooks", { method: "POST", key: jwt })
    expect(created.status).toBe(201)
    // A session tracks the member's live roles: the admin may list members.
    expect((await server().request("/v2/members", { key: jwt })).status).toBe(200)
    // What it created is the member's: the member's API key sees it.
    const listed = await body(await server().request("/v2/playbooks", { key: org.key }))
    expect(listed.total_count).toBe(1)
  })

  it("refuses expired, unsigned, forged, misaddressed and orphaned tokens", async () => {
    const org = await server().newOrg()
    const claims = { sub: org.memberId, organization_id: org.organizationId }
    const refused = async (jwt: string, message: RegExp) => {
      const response = await server().request("/v2/playbooks", { key: jwt })
      expect(response.status).toBe(401)
      const { error } = await body(response)
      expect(error.code).toBe("unauthenticated")
      expect(error.message).toMatch(message)
    }
    await refused(await token(claims, { exp: Math.floor(Date.now() / 1000) - 60 }), /expired/)
    await refused(await token(claims, { exp: null }), /exp/)
    await refused(await token(claims, { iss: "https://evil.example" }), /iss/)
    await refused(await token(claims, { aud: "someone-else" }), /aud/)
    const forged = await new Jose.SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setExpirationTime("5m")
      .setIssuer(issuer).setAudience(audience).sign(new TextEncoder().encode("another-secret-of-at-least-32-bytes"))
    await refused(forged, /signature/)
    await refused(await token({ sub: org.memberId }), /organization_id/)
    // An `alg: none` token is never accepted.
    const none = new Jose.UnsecuredJWT(claims).setExpirationTime("5m").setIssuer(issuer).setAudience(audience).encode()
    await refused(none, /invalid token/)

    // A lifetime over the maximum (24 h by default), even far in the future, and a fractional exp.
    await refused(await token(claims, { exp: 1e11 }), /lifetime exceeds 86400 seconds/)
    await refused(await token(claims, { exp: "25h" }), /lifetime exceeds/)
    const fractional = await new Jose.SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) + 60.5 })
      .setProtectedHeader({ alg: "HS256" }).setIssuer(issuer).setAudience(audience).sign(key)
    await refused(fractional, /exp must be a whole number/)

    // A token of a member deleted since it was issued stops working at once.
    const member = await server().run(Fixtures.memberWithKey(org.key))
    const jwt = await token({ sub: member.memberId, organization_id: org.organizationId })
    expect((await server().request("/v2/playbooks", { key: jwt })).status).toBe(200)
    await server().request(`/v2/members/${member.memberId}`, { method: "DELETE", key: org.key })
    await refused(jwt, /Authentication required/)
    // A member of another organization cannot claim this one.
    const other = await server().newOrg("Other")
    await refused(await token({ sub: other.memberId, organization_id: org.organizationId }), /Authentication required/)
    // API keys still work beside JWTs.
    expect((await server().request("/v2/playbooks", { key: org.key })).status).toBe(200)
  })
}, { jwt: { keys: { _tag: "Secret", secret: Redacted.make(secret) }, issuer, audience } })

const { privateKey, publicKey } = await Jose.generateKeyPair("ES256")
const jwk = { ...(await Jose.exportJWK(publicKey)), kid: "test-key", alg: "ES256", use: "sig" }

describeServer("JWT sessions (JWKS)", (server) => {
  it("verifies ES256 tokens against the key set, and refuses HS256 ones", async () => {
    const org = await server().newOrg()
    const claims = { sub: org.memberId, organization_id: org.organizationId }
    const signed = await new Jose.SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: "test-key" })
      .setExpirationTime("5m").sign(privateKey)
    expect((await server().request("/v2/playbooks", { key: signed })).status).toBe(200)
    const { privateKey: otherKey } = await Jose.generateKeyPair("ES256")
    const stranger = await new Jose.SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: "test-key" })
      .setExpirationTime("5m").sign(otherKey)
    expect((await server().request("/v2/playbooks", { key: stranger })).status).toBe(401)
    // A key id the set does not hold is refused, whoever signed.
    const unknownKid = await new Jose.SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: "other-key" })
      .setExpirationTime("5m").sign(privateKey)
    const kidResponse = await server().request("/v2/playbooks", { key: unknownKid })
    expect(kidResponse.status).toBe(401)
    expect((await body(kidResponse)).error.message).toMatch(/no matching key/)
    const symmetric = await new Jose.SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setExpirationTime("5m")
      .sign(new TextEncoder().encode(JSON.stringify(jwk)))
    const response = await server().request("/v2/playbooks", { key: symmetric })
    expect(response.status).toBe(401)
    expect((await body(response)).error.message).toMatch(/algorithm/)
  })
}, { jwt: { keys: { _tag: "Jwks", jwks: { keys: [jwk] } } } })
