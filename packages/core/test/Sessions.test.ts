import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as AuditLogRepo from "../src/AuditLogRepo.js"
import * as Delivery from "../src/Delivery.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as Members from "../src/Members.js"
import * as Organizations from "../src/Organizations.js"
import * as Permission from "../src/Permission.js"
import * as ServiceAccounts from "../src/ServiceAccounts.js"
import * as Session from "../src/Session.js"
import * as SessionRepo from "../src/SessionRepo.js"
import * as Sessions from "../src/Sessions.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Layer.mergeAll(Organizations.layer, Members.layer, ServiceAccounts.layer, Sessions.layer).pipe(
  Layer.provideMerge(Memory.layer)
)

const password = "correct horse battery"

// An organization whose invited member has set a password through the invite's link.
const setup = Effect.gen(function*() {
  const sessions = yield* Sessions.Sessions
  const { admin, org } = yield* Fixtures.organizationWithAdmin()
  const invited = yield* (yield* Members.Members).invite(admin, { email: "bob@acme.example", role: "member" })
  const first = yield* sessions.setPassword({ token: invited.sign_in_token!, password })
  return { admin, org, invited, first, sessions }
})

const failure = <A, E extends { readonly _tag: string; readonly message?: string }, R>(
  effect: Effect.Effect<A, E, R>
) => Effect.map(Effect.flip(effect), (e) => ({ tag: e._tag, message: e.message }))

describe("Sessions", () => {
  it.effect("an invite's link sets the password once, and the password then signs in", () =>
    Effect.gen(function*() {
      const { first, invited, org, sessions } = yield* setup
      expect(first.member_id).toBe(invited.member_id)
      expect(first.organization_id).toBe(org)
      expect(yield* failure(sessions.setPassword({ token: invited.sign_in_token!, password: "another password" })))
        .toEqual({ tag: "Unauthenticated", message: Sessions.LINK_UNUSABLE })
      const signedIn = yield* sessions.signIn({ email: "BOB@acme.example", password })
      expect(signedIn.member_id).toBe(invited.member_id)
      expect(signedIn.refresh_token).not.toBe(first.refresh_token)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a wrong password, an unknown address and a member without a password all fail alike", () =>
    Effect.gen(function*() {
      const { admin, sessions } = yield* setup
      yield* (yield* Members.Members).invite(admin, { email: "nopass@acme.example", role: "member" })
      const expected = { tag: "Unauthenticated", message: Sessions.BAD_CREDENTIALS }
      expect(yield* failure(sessions.signIn({ email: "bob@acme.example", password: "wrong password" })))
        .toEqual(expected)
      expect(yield* failure(sessions.signIn({ email: "nobody@acme.example", password }))).toEqual(expected)
      expect(yield* failure(sessions.signIn({ email: "nopass@acme.example", password }))).toEqual(expected)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a link expires, and only the newest link of a member works", () =>
    Effect.gen(function*() {
      const { admin, sessions } = yield* setup
      const { sign_in_token } = yield* (yield* Members.Members).invite(admin, {
        email: "late@acme.example",
        role: "member"
      })
      yield* TestClock.adjust(Duration.sum(Session.linkLifetime.invite, Duration.seconds(1)))
      expect(yield* failure(sessions.setPassword({ token: sign_in_token!, password }))).toEqual({
        tag: "Unauthenticated",
        message: Sessions.LINK_UNUSABLE
      })
      const member = (yield* (yield* Members.Members).list(admin)).members.find((m) => m.email === "late@acme.example")!
      const older = yield* sessions.issueLink(admin, member.id, { purpose: "reset" })
      const newer = yield* sessions.issueLink(admin, member.id, { purpose: "reset" })
      expect((yield* failure(sessions.setPassword({ token: older.token!, password }))).tag).toBe("Unauthenticated")
      expect((yield* sessions.setPassword({ token: newer.token!, password })).member_id).toBe(member.id)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a renewal rotates the refresh token; replaying the old one after the grace ends the session", () =>
    Effect.gen(function*() {
      const { first, sessions } = yield* setup
      const second = yield* sessions.refresh(first.refresh_token)
      expect(second.refresh_token).not.toBe(first.refresh_token)
      // Within the grace (another tab renewing with the same cookie): refused, the session lives on.
      expect((yield* failure(sessions.refresh(first.refresh_token))).tag).toBe("Unauthenticated")
      const third = yield* sessions.refresh(second.refresh_token)
      yield* TestClock.adjust(Duration.sum(Session.rotationGrace, Duration.seconds(1)))
      // `second` was replaced more than the grace ago: a copy is in someone else's hands.
      expect((yield* failure(sessions.refresh(second.refresh_token))).message).toBe(Sessions.SESSION_ENDED)
      expect((yield* failure(sessions.refresh(third.refresh_token))).message).toBe(Sessions.SESSION_ENDED)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a refresh token expires when unused, and sign-out ends it", () =>
    Effect.gen(function*() {
      const { first, sessions } = yield* setup
      const renewed = yield* sessions.refresh(first.refresh_token)
      yield* sessions.signOut(renewed.refresh_token)
      expect((yield* failure(sessions.refresh(renewed.refresh_token))).tag).toBe("Unauthenticated")
      const again = yield* sessions.signIn({ email: "bob@acme.example", password })
      yield* TestClock.adjust(Duration.sum(Session.refreshTokenLifetime, Duration.seconds(1)))
      expect((yield* failure(sessions.refresh(again.refresh_token))).tag).toBe("Unauthenticated")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("setting a password ends the member's other sessions; deleting the member ends them too", () =>
    Effect.gen(function*() {
      const { admin, first, invited, sessions } = yield* setup
      const reset = yield* sessions.issueLink(admin, invited.member_id, { purpose: "reset" })
      const afterReset = yield* sessions.setPassword({ token: reset.token!, password: "a brand new password" })
      expect((yield* failure(sessions.refresh(first.refresh_token))).tag).toBe("Unauthenticated")
      yield* (yield* Members.Members).delete(admin, invited.member_id, { hard_delete: false })
      expect((yield* failure(sessions.refresh(afterReset.refresh_token))).tag).toBe("Unauthenticated")
      expect((yield* failure(sessions.signIn({ email: "bob@acme.example", password: "a brand new password" }))).tag)
        .toBe("Unauthenticated")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("issuing a link needs member:write, a live member of the organization and a human", () =>
    Effect.gen(function*() {
      const { admin, invited, org, sessions } = yield* setup
      const member = yield* Fixtures.principal(org, invited.member_id)
      expect((yield* failure(sessions.issueLink(member, invited.member_id, { purpose: "reset" }))).tag)
        .toBe("PermissionDenied")
      const { admin: foreignAdmin } = yield* Fixtures.organizationWithAdmin()
      expect((yield* failure(sessions.issueLink(foreignAdmin, invited.member_id, { purpose: "reset" }))).tag)
        .toBe("NotFound")
      const bot = yield* (yield* ServiceAccounts.ServiceAccounts).create(admin, { name: "bot", role_ids: [] })
      expect((yield* failure(sessions.issueLink(admin, bot.member_id, { purpose: "reset" }))).tag)
        .toBe("InvalidRequest")
      yield* sessions.issueLink(admin, invited.member_id, { purpose: "reset" })
      const actions = (yield* (yield* AuditLogRepo.AuditLogRepo).list(org, { limit: 50 })).items.map((e) => e.action)
      expect(actions).toContain("member.sign_in_link")
      expect(actions).toContain("member.password_set")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a member manager gets no link for an admin, nor for anyone holding a permission it lacks", () =>
    Effect.gen(function*() {
      const { admin, invited, org, sessions } = yield* setup
      // A role that manages members (and holds what a plain member holds), without being an admin.
      const manager = yield* Fixtures.role(org, "people", {
        permissions: [...Permission.memberDefaults, "member:read", "member:write"]
      })
      yield* Effect.orDie((yield* MemberRepo.MemberRepo).assignRole(org, invited.member_id, manager.id))
      const caller = yield* Fixtures.principal(org, invited.member_id)
      const other = yield* (yield* Members.Members).invite(admin, { email: "carl@acme.example", role: "member" })
      // A plain member: everything it holds, the caller holds.
      yield* sessions.issueLink(caller, other.member_id, { purpose: "reset" })
      // The admin, and a member given one permission the caller lacks: the link would sign in as them.
      expect(yield* failure(sessions.issueLink(caller, admin.memberId, { purpose: "reset" }))).toEqual({
        tag: "PermissionDenied",
        message: "admin role required"
      })
      const auditor = yield* Fixtures.role(org, "roles", { permissions: ["role:write"] })
      yield* Effect.orDie((yield* MemberRepo.MemberRepo).assignRole(org, other.member_id, auditor.id))
      expect((yield* failure(sessions.issueLink(caller, other.member_id, { purpose: "reset" }))).tag)
        .toBe("PermissionDenied")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("an address in two organizations signs in where its password works, or asks which", () =>
    Effect.gen(function*() {
      const { sessions } = yield* setup
      const { admin: otherAdmin, org: other } = yield* Fixtures.organizationWithAdmin()
      const there = yield* (yield* Members.Members).invite(otherAdmin, { email: "bob@acme.example", role: "member" })
      yield* sessions.setPassword({ token: there.sign_in_token!, password: "other org password" })
      expect((yield* sessions.signIn({ email: "bob@acme.example", password: "other org password" })).organization_id)
        .toBe(other)
      const sameAgain = yield* sessions.issueLink(otherAdmin, there.member_id, { purpose: "reset" })
      yield* sessions.setPassword({ token: sameAgain.token!, password })
      expect((yield* failure(sessions.signIn({ email: "bob@acme.example", password }))).tag).toBe("InvalidRequest")
      expect(
        (yield* sessions.signIn({ email: "bob@acme.example", password, organization_id: other }))
          .organization_id
      ).toBe(other)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("the signing key is made once", () =>
    Effect.gen(function*() {
      const sessions = yield* Sessions.Sessions
      const key = yield* sessions.signingKey
      expect(key.length).toBeGreaterThanOrEqual(43)
      expect(yield* sessions.signingKey).toBe(key)
      expect(yield* (yield* SessionRepo.SessionRepo).signingKey("other")).toBe(key)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a service account never signs in with a password, even with a password row", () =>
    Effect.gen(function*() {
      const { admin, first, org, sessions } = yield* setup
      const bot = yield* (yield* ServiceAccounts.ServiceAccounts).create(admin, { name: "bot", role_ids: [] })
      const repo = yield* SessionRepo.SessionRepo
      const hash = Option.getOrThrow(yield* repo.passwordHash(org, first.member_id))
      yield* repo.setPassword(org, bot.member_id, hash, yield* DateTime.now)
      expect(yield* failure(sessions.signIn({ email: bot.email, password }))).toEqual({
        tag: "Unauthenticated",
        message: Sessions.BAD_CREDENTIALS
      })
    }).pipe(Effect.provide(TestLayer)))
})

describe("Sessions.signInWithIdentity", () => {
  it.effect("signs in the one live human member with the address, and refuses anyone else", () =>
    Effect.gen(function*() {
      const { admin, invited, sessions } = yield* setup
      const signedIn = yield* sessions.signInWithIdentity("BOB@acme.example")
      expect(signedIn.member_id).toBe(invited.member_id)
      expect((yield* sessions.refresh(signedIn.refresh_token)).member_id).toBe(invited.member_id)
      expect((yield* failure(sessions.signInWithIdentity("nobody@acme.example"))).message).toMatch(/ask for an invite/)
      const bot = yield* (yield* ServiceAccounts.ServiceAccounts).create(admin, { name: "bot", role_ids: [] })
      expect((yield* failure(sessions.signInWithIdentity(bot.email))).tag).toBe("Unauthenticated")
      const { admin: otherAdmin } = yield* Fixtures.organizationWithAdmin("Other", "root@other.example")
      yield* (yield* Members.Members).invite(otherAdmin, { email: "bob@acme.example", role: "member" })
      expect((yield* failure(sessions.signInWithIdentity("bob@acme.example"))).message).toMatch(/several organizations/)
    }).pipe(Effect.provide(TestLayer)))
})

describe("sign-in links by e-mail", () => {
  // A deployment with e-mail configured.
  const MailLayer = Layer.mergeAll(Organizations.layer, Members.layer, ServiceAccounts.layer, Sessions.layer).pipe(
    Layer.provideMerge(Layer.merge(Memory.layer, Delivery.layerMemoryWith({ sendsEmail: true })))
  )

  it.effect("an invite and a reset e-mail the link where delivery is configured", () =>
    Effect.gen(function*() {
      const { admin, sessions } = yield* setup
      const linkUrl = (token: string) => `https://sightline.example/#/set-password/${token}`
      const invited = yield* (yield* Members.Members).invite(
        admin,
        { email: "dan@acme.example", role: "member" },
        linkUrl
      )
      expect(invited.sign_in_emailed).toBe(true)
      const reset = yield* sessions.issueLink(admin, invited.member_id, { purpose: "reset" }, linkUrl)
      expect(reset.emailed).toBe(true)
      const sent = (yield* (yield* Delivery.MemoryDelivery).sent).filter((m) =>
        m.target._tag === "Email" && m.target.address === "dan@acme.example"
      )
      expect(sent.map((m) => m.subject)).toEqual(["You are invited to Sightline", "Reset your Sightline password"])
      // E-mailed, the token is not answered: it goes to the member's address only.
      expect(invited.sign_in_token).toBeUndefined()
      expect(reset.token).toBeUndefined()
      const mailed = sent.map((m) => /set-password\/([A-Za-z0-9_-]+)/.exec(m.text)?.[1])
      expect(mailed.every((token) => token !== undefined)).toBe(true)
      expect(sent[1]!.html).toContain(`href="${linkUrl(mailed[1]!)}"`)
      // The mailed reset link sets the password (the invite's stopped working when it was issued).
      expect(yield* failure(sessions.setPassword({ token: mailed[0]!, password }))).toEqual({
        tag: "Unauthenticated",
        message: Sessions.LINK_UNUSABLE
      })
      expect((yield* sessions.setPassword({ token: mailed[1]!, password })).member_id).toBe(invited.member_id)
      // Without a URL builder nothing is sent: the link is only in the answer.
      const quiet = yield* sessions.issueLink(admin, invited.member_id, { purpose: "reset" })
      expect(quiet.emailed).toBe(false)
      expect(quiet.token).toEqual(expect.any(String))
      expect((yield* (yield* Delivery.MemoryDelivery).sent).length).toBe(sent.length)
    }).pipe(Effect.provide(MailLayer)))

  it.effect("without e-mail configured, the link is answered for the caller to pass on", () =>
    Effect.gen(function*() {
      const { admin, sessions } = yield* setup
      const linkUrl = (token: string) => `https://sightline.example/#/set-password/${token}`
      const invited = yield* (yield* Members.Members).invite(
        admin,
        { email: "erin@acme.example", role: "member" },
        linkUrl
      )
      expect(invited.sign_in_token).toEqual(expect.any(String))
      const reset = yield* sessions.issueLink(admin, invited.member_id, { purpose: "reset" }, linkUrl)
      expect((yield* sessions.setPassword({ token: reset.token!, password })).member_id).toBe(invited.member_id)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a link e-mail escapes what it quotes", () =>
    Effect.sync(() => {
      const mail = Session.linkEmail(
        "reset",
        "https://x.example/#/set-password/a\"<b>",
        new Date("2030-01-01T00:00:00Z")
      )
      expect(mail.html).not.toContain("<b>")
      expect(mail.html).toContain("&quot;&lt;b&gt;")
      expect(mail.text).toContain("until 2030-01-01 00:00 UTC")
    }))
})
