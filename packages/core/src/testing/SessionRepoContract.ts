/**
 * The contract every `SessionRepo` implementation must satisfy (and `MemberRepo.findEverywhereByEmail`,
 * which sign-in reads beside it).
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type MemberId, OrganizationId } from "../Ids.js"
import { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import { SecretHash } from "../Secret.js"
import type { SessionRecord } from "../Session.js"
import { SessionRepo } from "../SessionRepo.js"
import type { Transaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const hash = (n: number) => SecretHash.make(n.toString(16).padStart(64, "0"))
const at = (iso: string) => DateTime.unsafeMake(iso)
let next = 1
const freshHash = () => hash(next++ * 7919 + Math.floor(Math.random() * 1e9))

const session = (organizationId: OrganizationId, memberId: MemberId, refresh = freshHash()): SessionRecord => ({
  id: Fixtures.uuid(),
  organization_id: organizationId,
  member_id: memberId,
  refresh_hash: refresh,
  expires_at: at("2030-01-15T00:00:00Z"),
  created_at: at("2030-01-01T00:00:00Z")
})

/**
 * Registers the `SessionRepo` contract suite against `layer`.
 *
 * @since 0.1.0
 * @category utils
 */
export const sessionRepoContract = (
  name: string,
  layer: Layer.Layer<SessionRepo | OrganizationRepo | MemberRepo | Transaction, unknown>
): void => {
  describe(`SessionRepo contract: ${name}`, () => {
    it.effect("finds members of every organization by e-mail, case-insensitively, oldest first", () =>
      Effect.gen(function*() {
        const email = `Ada.${Fixtures.uuid()}@Example.com`
        const first = yield* Fixtures.member((yield* Fixtures.organization()).id, { email })
        const second = yield* Fixtures.member((yield* Fixtures.organization()).id, { email: email.toLowerCase() })
        yield* Fixtures.member((yield* Fixtures.organization()).id)
        const found = yield* (yield* MemberRepo).findEverywhereByEmail(email.toUpperCase())
        expect(found.map((m) => m.id).sort()).toEqual([first.id, second.id].sort())
      }).pipe(Effect.provide(layer)))

    it.effect("keeps one password per member, replaced when set again, in its own organization only", () =>
      Effect.gen(function*() {
        const repo = yield* SessionRepo
        const org = yield* Fixtures.organization()
        const other = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        expect(Option.isNone(yield* repo.passwordHash(org.id, member.id))).toBe(true)
        yield* repo.setPassword(org.id, member.id, "first", at("2030-01-01T00:00:00Z"))
        yield* repo.setPassword(org.id, member.id, "second", at("2030-01-02T00:00:00Z"))
        expect(yield* repo.passwordHash(org.id, member.id)).toEqual(Option.some("second"))
        expect(Option.isNone(yield* repo.passwordHash(other.id, member.id))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("uses a link once, before it expires, and only the member's newest link", () =>
      Effect.gen(function*() {
        const repo = yield* SessionRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const link = (tokenHash: SecretHash, created: string) => ({
          token_hash: tokenHash,
          organization_id: org.id,
          member_id: member.id,
          purpose: "invite" as const,
          expires_at: at("2030-01-08T00:00:00Z"),
          created_at: at(created)
        })
        const older = freshHash()
        const newer = freshHash()
        yield* repo.createLink(link(older, "2030-01-01T00:00:00Z"))
        yield* repo.createLink(link(newer, "2030-01-02T00:00:00Z"))
        expect(Option.isNone(yield* repo.redeemLink(older, at("2030-01-03T00:00:00Z")))).toBe(true)
        // Expired: refused, and still unused.
        expect(Option.isNone(yield* repo.redeemLink(newer, at("2030-01-09T00:00:00Z")))).toBe(true)
        const used = yield* repo.redeemLink(newer, at("2030-01-03T00:00:00Z"))
        expect(Option.map(used, (l) => l.member_id)).toEqual(Option.some(member.id))
        expect(Option.isNone(yield* repo.redeemLink(newer, at("2030-01-03T00:00:01Z")))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("rotates a live session's refresh hash once; the old one is then superseded", () =>
      Effect.gen(function*() {
        const repo = yield* SessionRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const s = session(org.id, member.id)
        yield* repo.createSession(s)
        const second = freshHash()
        const when = at("2030-01-02T00:00:00Z")
        const later = at("2030-01-20T00:00:00Z")
        const rotated = yield* repo.rotate(s.refresh_hash, second, when, later)
        expect(rotated._tag).toBe("Rotated")
        if (rotated._tag === "Rotated") {
          expect(rotated.session.refresh_hash).toBe(second)
          expect(rotated.session.previous_hash).toBe(s.refresh_hash)
          expect(DateTime.toEpochMillis(rotated.session.expires_at)).toBe(DateTime.toEpochMillis(later))
        }
        // The same token again cannot win a second time.
        const again = yield* repo.rotate(s.refresh_hash, freshHash(), when, later)
        expect(again._tag).toBe("Superseded")
        expect(again._tag === "Superseded" && again.session.id).toBe(s.id)
        expect(again._tag === "Superseded" && again.latest).toBe(true)
        // Two renewals on, the first token is still known as spent, and as not the latest.
        const third = freshHash()
        expect((yield* repo.rotate(second, third, when, later))._tag).toBe("Rotated")
        const old = yield* repo.rotate(s.refresh_hash, freshHash(), when, later)
        expect(old._tag === "Superseded" && [old.session.id, old.latest]).toEqual([s.id, false])
        const last = yield* repo.rotate(second, freshHash(), when, later)
        expect(last._tag === "Superseded" && last.latest).toBe(true)
        expect((yield* repo.rotate(freshHash(), freshHash(), when, later))._tag).toBe("Unknown")
        expect(Option.map(yield* repo.findByRefresh(third), (x) => x.id)).toEqual(Option.some(s.id))
      }).pipe(Effect.provide(layer)))

    it.effect("never renews an expired or revoked session", () =>
      Effect.gen(function*() {
        const repo = yield* SessionRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const expired = session(org.id, member.id)
        yield* repo.createSession(expired)
        const after = at("2030-02-01T00:00:00Z")
        expect((yield* repo.rotate(expired.refresh_hash, freshHash(), after, after))._tag).toBe("Unknown")
        const revoked = session(org.id, member.id)
        yield* repo.createSession(revoked)
        yield* repo.revokeSession(revoked.id, at("2030-01-02T00:00:00Z"))
        const when = at("2030-01-03T00:00:00Z")
        expect((yield* repo.rotate(revoked.refresh_hash, freshHash(), when, after))._tag).toBe("Unknown")
        const found = yield* repo.findByRefresh(revoked.refresh_hash)
        expect(Option.map(found, (x) => x.revoked_at !== undefined)).toEqual(Option.some(true))
      }).pipe(Effect.provide(layer)))

    it.effect("a session is live until it is revoked or expires, for its own member and organization only", () =>
      Effect.gen(function*() {
        const repo = yield* SessionRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const other = yield* Fixtures.member(org.id)
        const s = session(org.id, member.id)
        yield* repo.createSession(s)
        const when = at("2030-01-03T00:00:00Z")
        expect(yield* repo.isLive(org.id, member.id, s.id, when)).toBe(true)
        expect(yield* repo.isLive(org.id, other.id, s.id, when)).toBe(false)
        expect(yield* repo.isLive(OrganizationId.make(Fixtures.uuid()), member.id, s.id, when)).toBe(false)
        expect(yield* repo.isLive(org.id, member.id, Fixtures.uuid(), when)).toBe(false)
        expect(yield* repo.isLive(org.id, member.id, "not a uuid", when)).toBe(false)
        expect(yield* repo.isLive(org.id, member.id, s.id, at("2030-01-15T00:00:00Z"))).toBe(false)
        yield* repo.revokeSession(s.id, at("2030-01-04T00:00:00Z"))
        expect(yield* repo.isLive(org.id, member.id, s.id, at("2030-01-05T00:00:00Z"))).toBe(false)
      }).pipe(Effect.provide(layer)))

    it.effect("ends every live session of one member, and no one else's", () =>
      Effect.gen(function*() {
        const repo = yield* SessionRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const bystander = yield* Fixtures.member(org.id)
        const mine = [session(org.id, member.id), session(org.id, member.id)]
        const theirs = session(org.id, bystander.id)
        yield* Effect.forEach([...mine, theirs], repo.createSession)
        yield* repo.revokeMemberSessions(org.id, member.id, at("2030-01-02T00:00:00Z"))
        const when = at("2030-01-03T00:00:00Z")
        for (const s of mine) expect((yield* repo.rotate(s.refresh_hash, freshHash(), when, when))._tag).toBe("Unknown")
        const kept = yield* repo.rotate(theirs.refresh_hash, freshHash(), when, at("2030-01-20T00:00:00Z"))
        expect(kept._tag).toBe("Rotated")
      }).pipe(Effect.provide(layer)))

    it.effect("keeps the first signing key offered", () =>
      Effect.gen(function*() {
        const repo = yield* SessionRepo
        const first = yield* repo.signingKey(`key-${Fixtures.uuid()}`)
        expect(yield* repo.signingKey(`key-${Fixtures.uuid()}`)).toBe(first)
      }).pipe(Effect.provide(layer)))
  })
}
