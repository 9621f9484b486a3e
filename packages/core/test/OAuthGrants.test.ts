import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { ApiKeyId } from "../src/Ids.js"
import * as OAuth from "../src/OAuth.js"
import { ClientDocumentError, OAuthClientDocuments } from "../src/OAuthClientDocuments.js"
import * as OAuthGrants from "../src/OAuthGrants.js"
import * as Organizations from "../src/Organizations.js"
import * as Policy from "../src/Policy.js"
import * as Secret from "../src/Secret.js"
import * as Sessions from "../src/Sessions.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Layer.mergeAll(Organizations.layer, Sessions.layer, OAuthGrants.layer).pipe(
  Layer.provideMerge(Memory.layer)
)

const resource = "https://sightline.example/mcp"
const verifier = "a-verifier-of-at-least-43-characters-0123456789abcdef"

const setup = Effect.gen(function*() {
  const grants = yield* OAuthGrants.OAuthGrants
  const { admin, org } = yield* Fixtures.organizationWithAdmin()
  const client = yield* grants.register({ redirect_uris: ["http://127.0.0.1:33418/callback"], client_name: "Agent" })
  const request: OAuth.AuthorizationRequest = {
    response_type: "code",
    client_id: client.client_id,
    // Another port of the same loopback URI: a native client listens where it can.
    redirect_uri: "http://127.0.0.1:40000/callback",
    code_challenge: yield* Secret.sha256Base64Url(verifier),
    code_challenge_method: "S256",
    scope: "read query",
    state: "xyz",
    resource
  }
  return { admin, org, client, grants, request }
})

const codeOf = (decided: OAuth.Decided) => new URL(decided.redirect_to).searchParams.get("code")!

describe("OAuthGrants", () => {
  it.effect("a consented request's code is exchanged once, with its verifier, for a grant that renews", () =>
    Effect.gen(function*() {
      const { admin, client, grants, request } = yield* setup
      expect(yield* grants.consent(admin, request, resource)).toEqual({
        client_id: client.client_id,
        client_name: "Agent",
        redirect_uri: request.redirect_uri,
        scopes: ["read", "query"]
      })
      const decided = yield* grants.decide(admin, request, resource, true)
      const url = new URL(decided.redirect_to)
      expect(url.origin + url.pathname).toBe("http://127.0.0.1:40000/callback")
      expect(url.searchParams.get("state")).toBe("xyz")
      const exchange = { code: codeOf(decided), redirect_uri: request.redirect_uri, client_id: client.client_id }

      // A wrong verifier or redirect URI is refused, and leaves the code to its owner.
      expect((yield* Effect.flip(grants.exchange({ ...exchange, code_verifier: "wrong" }))).error).toBe("invalid_grant")
      expect(
        (yield* Effect.flip(
          grants.exchange({ ...exchange, code_verifier: verifier, redirect_uri: "http://127.0.0.1:1/other" })
        )).message
      ).toMatch(/redirect_uri/)
      // A code is not a refresh token.
      expect((yield* Effect.flip(grants.refresh(exchange.code, client.client_id))).error).toBe("invalid_grant")
      const issued = yield* grants.exchange({ ...exchange, code_verifier: verifier })
      expect(issued.scopes).toEqual(["read", "query"])
      expect(issued.signedIn.member_id).toBe(admin.memberId)

      // Renewal rotates the refresh token.
      const renewed = yield* grants.refresh(issued.signedIn.refresh_token, client.client_id)
      expect(renewed.signedIn.session_id).toBe(issued.signedIn.session_id)
      expect(renewed.signedIn.refresh_token).not.toBe(issued.signedIn.refresh_token)
      const listed = yield* grants.list(admin)
      expect(listed.grants.map((grant) => grant.client_name)).toEqual(["Agent"])
      // The old token again: someone holds a copy, so the grant ends.
      expect((yield* Effect.flip(grants.refresh(issued.signedIn.refresh_token, client.client_id))).message)
        .toMatch(/used twice/)
      expect((yield* Effect.flip(grants.refresh(renewed.signedIn.refresh_token, client.client_id))).error)
        .toBe("invalid_grant")
      expect((yield* grants.list(admin)).grants).toEqual([])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("the member grants some of the scopes asked for, never others, and at least one", () =>
    Effect.gen(function*() {
      const { admin, client, grants, request } = yield* setup
      const exchange = (decided: OAuth.Decided) =>
        grants.exchange({
          code: codeOf(decided),
          code_verifier: verifier,
          redirect_uri: request.redirect_uri,
          client_id: client.client_id
        })
      const kept = yield* exchange(yield* grants.decide(admin, request, resource, true, ["query"]))
      expect(kept.scopes).toEqual(["query"])
      expect((yield* Effect.flip(grants.decide(admin, request, resource, true, ["ask"]))).message)
        .toMatch(/did not ask for ask/)
      expect((yield* Effect.flip(grants.decide(admin, request, resource, true, []))).message)
        .toMatch(/at least one scope/)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a replayed code ends the grant it made; an expired code is refused", () =>
    Effect.gen(function*() {
      const { admin, client, grants, request } = yield* setup
      const exchange = {
        code: codeOf(yield* grants.decide(admin, request, resource, true)),
        code_verifier: verifier,
        redirect_uri: request.redirect_uri,
        client_id: client.client_id
      }
      const issued = yield* grants.exchange(exchange)
      expect((yield* Effect.flip(grants.exchange(exchange))).error).toBe("invalid_grant")
      expect((yield* Effect.flip(grants.refresh(issued.signedIn.refresh_token, client.client_id))).error)
        .toBe("invalid_grant")

      const late = codeOf(yield* grants.decide(admin, request, resource, true))
      yield* TestClock.adjust(Duration.sum(OAuth.codeLifetime, Duration.seconds(1)))
      expect((yield* Effect.flip(grants.exchange({ ...exchange, code: late }))).error).toBe("invalid_grant")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("consent checks the client, its redirect URI, the scopes, the resource and who consents", () =>
    Effect.gen(function*() {
      const { admin, grants, request } = yield* setup
      const refused = (change: Partial<OAuth.AuthorizationRequest>, principal: Policy.Principal = admin) =>
        Effect.map(Effect.flip(grants.consent(principal, { ...request, ...change }, resource)), (e) => e.message)
      expect(yield* refused({ client_id: "nobody" })).toMatch(/no such client/)
      expect(yield* refused({ redirect_uri: "https://evil.example/callback" })).toMatch(/redirect_uri/)
      expect(yield* refused({ redirect_uri: "http://127.0.0.1:40000/other" })).toMatch(/redirect_uri/)
      expect(yield* refused({ scope: "read admin" })).toMatch(/unknown scope admin/)
      expect(yield* refused({ resource: "https://other.example/mcp" })).toMatch(/resource/)
      expect(
        yield* refused({}, {
          ...admin,
          auth: Policy.ApiKey({
            keyId: ApiKeyId.make(admin.memberId),
            assumedRoleIds: [],
            inheritAllRoles: true,
            fullMemberAccess: true
          })
        })
      )
        .toMatch(/signed in to the console/)
      // Refusing sends the browser back with access_denied.
      const denied = new URL((yield* grants.decide(admin, request, resource, false)).redirect_to)
      expect(denied.searchParams.get("error")).toBe("access_denied")
      expect(denied.searchParams.get("state")).toBe("xyz")
      expect(denied.searchParams.get("code")).toBeNull()
    }).pipe(Effect.provide(TestLayer)))

  it.effect("an admin revokes a client's grants; a grant's refresh token is not a console session's", () =>
    Effect.gen(function*() {
      const { admin, client, grants, request } = yield* setup
      const issued = yield* grants.exchange({
        code: codeOf(yield* grants.decide(admin, request, resource, true)),
        code_verifier: verifier,
        redirect_uri: request.redirect_uri,
        client_id: client.client_id
      })
      // The console's renewal refuses it: a grant never becomes a browser session.
      expect((yield* Effect.flip((yield* Sessions.Sessions).refresh(issued.signedIn.refresh_token)))._tag)
        .toBe("Unauthenticated")
      yield* grants.revokeClient(admin, client.client_id)
      expect((yield* Effect.flip(grants.refresh(issued.signedIn.refresh_token, client.client_id))).error)
        .toBe("invalid_grant")
      expect((yield* Effect.flip(grants.revokeClient(admin, client.client_id)))._tag).toBe("NotFound")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a client named by its metadata document's URL is read from it, and must be named by it", () => {
    const url = "https://agent.example/client.json"
    const documents = Layer.succeed(OAuthClientDocuments, {
      fetch: (at) =>
        at === url
          ? Effect.succeed({ client_id: url, client_name: "Doc agent", redirect_uris: ["https://agent.example/cb"] })
          : at === "https://agent.example/impostor.json"
          ? Effect.succeed({ client_id: url, redirect_uris: ["https://agent.example/cb"] })
          : Effect.fail(new ClientDocumentError({ message: "the client's metadata document answered 404" }))
    })
    return Effect.gen(function*() {
      const { admin, request } = yield* setup
      const grants = yield* OAuthGrants.OAuthGrants
      const asked = { ...request, client_id: url, redirect_uri: "https://agent.example/cb" }
      expect((yield* grants.consent(admin, asked, resource)).client_name).toBe("Doc agent")
      const refused = (clientId: string) =>
        Effect.map(Effect.flip(grants.consent(admin, { ...asked, client_id: clientId }, resource)), (e) => e.message)
      expect(yield* refused("https://agent.example/impostor.json")).toMatch(/names another client_id/)
      expect(yield* refused("https://agent.example/missing.json")).toMatch(/answered 404/)
    }).pipe(Effect.provide(Layer.provide(TestLayer, documents)))
  })
})
