import { expect, it } from "@effect/vitest"
import { Sessions } from "@sightline/core/Sessions"
import * as Effect from "effect/Effect"
import * as Jose from "jose"
import * as Http from "node:http"
import { signInFailureBucket } from "../src/internal/handlers/auth.js"
import * as SessionTokens from "../src/SessionTokens.js"
import { body, describeServer, type TestServer } from "./utils/server.js"

const password = "correct horse battery"

/** The refresh cookie a response set: its value and attributes. */
const refreshCookieOf = (response: Response) => {
  const header = response.headers.getSetCookie().find((c) => c.startsWith("sightline_refresh="))
  if (header === undefined) throw new Error(`no refresh cookie (${response.status})`)
  const [pair, ...attributes] = header.split(/;\s*/)
  return { value: pair!.slice("sightline_refresh=".length), attributes: attributes.map((a) => a.toLowerCase()) }
}

const withCookie = (value: string) => ({ headers: { cookie: `sightline_refresh=${value}` } })

// An invited member who has set a password with the invite's link.
const invitedMember = async (server: TestServer, email = `bob-${crypto.randomUUID().slice(0, 8)}@example.test`) => {
  const org = await server.newOrg()
  const invite = await server.request("/v2/members/invite", {
    method: "POST",
    key: org.key,
    json: { email, role: "member" }
  })
  expect(invite.status).toBe(200)
  const invited = await body(invite)
  const set = await server.request("/v2/auth/password", {
    method: "POST",
    json: { token: invited.sign_in_token, password }
  })
  expect(set.status).toBe(200)
  return { org, email, invited, set, session: await body(set), cookie: refreshCookieOf(set) }
}

describeServer("sign-in for people", (server) => {
  it("an invite answers a one-time link that sets a password and signs in", async () => {
    const { invited, session, set } = await invitedMember(server())
    // No public URL is configured here: the link's base is the fixed default, never the request's Host.
    const url = new URL(invited.sign_in_url)
    expect(`${url.protocol}//${url.host}`).toBe("http://localhost")
    expect(url.hash).toBe(`#/set-password/${invited.sign_in_token}`)
    expect(session).toMatchObject({ token_type: "Bearer", expires_in: 900, member_id: invited.member_id })
    const cookie = refreshCookieOf(set)
    expect(cookie.attributes).toEqual(
      expect.arrayContaining(["httponly", "secure", "samesite=strict", "path=/v2/auth"])
    )
    expect(cookie.attributes.some((a) => a.startsWith("expires="))).toBe(true)
    // The access token works as a bearer token, for the member it names.
    const chats = await server().request("/v2/chats", { key: session.access_token })
    expect(chats.status).toBe(200)
    const again = await server().request("/v2/auth/password", {
      method: "POST",
      json: { token: invited.sign_in_token, password: "another password" }
    })
    expect(again.status).toBe(401)
    expect((await body(again)).error.message).toMatch(/invalid, used or expired/)
  })

  it("a Host header the client writes never becomes the base of a link", async () => {
    const org = await server().newOrg()
    const port = Number(new URL(server().baseUrl).port)
    const answer = await new Promise<string>((resolve, reject) => {
      const request = Http.request({
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/v2/members/invite",
        headers: { host: "evil.example", authorization: `Bearer ${org.key}`, "content-type": "application/json" }
      }, (response) => {
        let text = ""
        response.on("data", (chunk) => text += chunk)
        response.on("end", () => resolve(text))
      })
      request.on("error", reject)
      request.end(JSON.stringify({ email: "host@example.test", role: "member" }))
    })
    const invited = JSON.parse(answer)
    expect(invited.sign_in_url).toMatch(/^http:\/\/localhost\/#\/set-password\//)
    expect(answer).not.toContain("evil.example")
  })

  it("signs in with the password; a wrong one is 401 without saying which half was wrong", async () => {
    const { email, invited } = await invitedMember(server())
    const ok = await server().request("/v2/auth/sign-in", { method: "POST", json: { email, password } })
    expect(ok.status).toBe(200)
    expect((await body(ok)).member_id).toBe(invited.member_id)
    for (const attempt of [{ email, password: "wrong password" }, { email: "nobody@example.test", password }]) {
      const refused = await server().request("/v2/auth/sign-in", { method: "POST", json: attempt })
      expect(refused.status).toBe(401)
      expect((await body(refused)).error.message).toBe("invalid e-mail address or password")
    }
  })

  it("renewal rotates the cookie; an old cookie is refused; sign-out ends the session", async () => {
    const { cookie } = await invitedMember(server())
    const renewed = await server().request("/v2/auth/refresh", { method: "POST", ...withCookie(cookie.value) })
    expect(renewed.status).toBe(200)
    const next = refreshCookieOf(renewed)
    expect(next.value).not.toBe(cookie.value)
    expect((await body(renewed)).access_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/)
    const replayed = await server().request("/v2/auth/refresh", { method: "POST", ...withCookie(cookie.value) })
    expect(replayed.status).toBe(401)
    const out = await server().request("/v2/auth/sign-out", { method: "POST", ...withCookie(next.value) })
    expect(out.status).toBe(204)
    expect(refreshCookieOf(out).value).toBe("")
    const after = await server().request("/v2/auth/refresh", { method: "POST", ...withCookie(next.value) })
    expect(after.status).toBe(401)
    // No cookie: nothing to renew, which a signed-out page asks on every load; not an error.
    const none = await server().request("/v2/auth/refresh", { method: "POST" })
    expect(none.status).toBe(204)
    expect(none.headers.get("set-cookie")).toBeNull()
  })

  it("a session token forged with another key, or past its 15 minutes, is refused", async () => {
    const { session } = await invitedMember(server())
    const claims = Jose.decodeJwt(session.access_token)
    const forged = await new Jose.SignJWT({ organization_id: claims["organization_id"] })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(SessionTokens.issuer)
      .setSubject(claims.sub!)
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("not the deployment's key, but 32 bytes long"))
    const refused = await server().request("/v2/chats", { key: forged })
    expect(refused.status).toBe(401)
    expect((await body(refused)).error.message).toMatch(/signature/)
  })

  it("a deleted member's access token stops at once", async () => {
    const { invited, org, session } = await invitedMember(server())
    const deleted = await server().request(`/v2/members/${invited.member_id}`, { method: "DELETE", key: org.key })
    expect(deleted.status).toBe(200)
    expect((await server().request("/v2/chats", { key: session.access_token })).status).toBe(401)
  })

  it("a reset link needs member:write, and setting the password ends the member's other sessions", async () => {
    const { cookie, invited, org, session } = await invitedMember(server())
    const path = `/v2/members/${invited.member_id}/sign-in-link`
    const own = await server().request(path, { method: "POST", key: session.access_token, json: {} })
    expect(own.status).toBe(403)
    const issued = await server().request(path, { method: "POST", key: org.key, json: { purpose: "reset" } })
    expect(issued.status).toBe(200)
    const link = await body(issued)
    expect(link).toMatchObject({ member_id: invited.member_id, purpose: "reset" })
    expect(link.url.endsWith(`/#/set-password/${link.token}`)).toBe(true)
    const reset = await server().request("/v2/auth/password", {
      method: "POST",
      json: { token: link.token, password: "a new password" }
    })
    expect(reset.status).toBe(200)
    expect((await server().request("/v2/auth/refresh", { method: "POST", ...withCookie(cookie.value) })).status)
      .toBe(401)
    // The access token issued before the reset stops at once too; the new session's works.
    const old = await server().request("/v2/chats", { key: session.access_token })
    expect(old.status).toBe(401)
    expect((await body(old)).error.message).toBe("session ended: sign in again")
    expect((await server().request("/v2/chats", { key: (await body(reset)).access_token })).status).toBe(200)
  })

  it("a signed-out session's access token is refused at once, and so is one that names no session", async () => {
    const { cookie, session } = await invitedMember(server())
    expect((await server().request("/v2/chats", { key: session.access_token })).status).toBe(200)
    const out = await server().request("/v2/auth/sign-out", { method: "POST", ...withCookie(cookie.value) })
    expect(out.status).toBe(204)
    const after = await server().request("/v2/chats", { key: session.access_token })
    expect(after.status).toBe(401)
    expect((await body(after)).error.message).toBe("session ended: sign in again")
    // A token signed with the deployment's own key but naming no session (as tokens did before
    // sessions were named) is refused, not let through unchecked.
    const key = await server().run(Effect.flatMap(Sessions, (sessions) => sessions.signingKey))
    const claims = Jose.decodeJwt(session.access_token)
    const sessionless = await new Jose.SignJWT({ organization_id: claims["organization_id"] })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(SessionTokens.issuer)
      .setSubject(claims.sub!)
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(key))
    const refused = await server().request("/v2/chats", { key: sessionless })
    expect(refused.status).toBe(401)
    expect((await body(refused)).error.message).toBe("invalid token: no session")
    // A renewal keeps the session: its new access token works, the one before it too (same session).
    const second = await invitedMember(server())
    const renewed = await server().request("/v2/auth/refresh", { method: "POST", ...withCookie(second.cookie.value) })
    expect((await server().request("/v2/chats", { key: (await body(renewed)).access_token })).status).toBe(200)
    expect((await server().request("/v2/chats", { key: second.session.access_token })).status).toBe(200)
  })

  it("validates bodies: a short password, a missing field, an unknown field", async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ["/v2/auth/password", { token: "x", password: "short" }, /at least 8 characters/],
      ["/v2/auth/sign-in", { email: "a@example.test" }, /password/],
      ["/v2/auth/sign-in", { email: "a@example.test", password, remember: true }, /remember/]
    ]
    for (const [path, json, message] of cases) {
      const response = await server().request(path, { method: "POST", json })
      expect(response.status).toBe(400)
      expect((await body(response)).error.message).toMatch(message)
    }
  })
})

// Its own server: the failure budget of the test client's address starts full.
describeServer("sign-in brute-force protection", (server) => {
  it("after too many failures, even the right password is refused with 429 and Retry-After", async () => {
    const { email } = await invitedMember(server())
    for (let i = 0; i < signInFailureBucket.capacity; i++) {
      const failed = await server().request("/v2/auth/sign-in", {
        method: "POST",
        json: { email, password: `wrong ${i}` }
      })
      expect(failed.status).toBe(401)
    }
    const blocked = await server().request("/v2/auth/sign-in", { method: "POST", json: { email, password } })
    expect(blocked.status).toBe(429)
    expect(blocked.headers.get("retry-after")).toBe(String(Math.ceil(60 / signInFailureBucket.refillPerMinute)))
    expect((await body(blocked)).error.message).toBe("Too many failed sign-ins: retry later")
    // The throttle is per client and person: the owner, from another address, signs in as before.
    const owner = await signInFrom(server(), "127.0.0.2", { email, password })
    expect(owner.status).toBe(200)
    // And the blocked client may still sign in as someone else.
    const other = await invitedMember(server())
    expect(
      (await server().request("/v2/auth/sign-in", { method: "POST", json: { email: other.email, password } })).status
    )
      .toBe(200)
  })

  it("many clients failing for one person lock only the password, with a way around it said", async () => {
    const { email } = await invitedMember(server())
    // Ten clients of ten failures each: each pair's budget, and all of the account's.
    for (let client = 0; client < 10; client++) {
      for (let i = 0; i < signInFailureBucket.capacity; i++) {
        const failed = await signInFrom(server(), `127.0.1.${client + 1}`, { email, password: `wrong ${i}` })
        expect(failed.status).toBe(401)
      }
    }
    const locked = await signInFrom(server(), "127.0.2.1", { email, password })
    expect(locked.status).toBe(429)
    expect((JSON.parse(locked.text)).error.message).toMatch(
      /^Too many failed sign-ins for this account: sign in with a sign-in link/
    )
  })
})

// A sign-in sent from a given loopback address (the socket's own, as a client elsewhere would have).
const signInFrom = (server: TestServer, localAddress: string, json: unknown) =>
  new Promise<{ readonly status: number; readonly text: string }>((resolve, reject) => {
    const url = new URL(server.baseUrl)
    const request = Http.request({
      host: url.hostname,
      port: Number(url.port),
      localAddress,
      method: "POST",
      path: "/v2/auth/sign-in",
      headers: { "content-type": "application/json" }
    }, (response) => {
      let text = ""
      response.on("data", (chunk) => text += chunk)
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text }))
    })
    request.on("error", reject)
    request.end(JSON.stringify(json))
  })
