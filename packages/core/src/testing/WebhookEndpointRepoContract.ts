/**
 * The contract every `WebhookEndpointRepo` implementation satisfies.
 *
 * Every test creates its own organizations and members, so the suite runs on a shared, non-empty
 * database. Rows are compared through their encoded form, so a timestamp or an optional field that
 * does not survive storage fails the comparison.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type MemberId, type OrganizationId, WebhookEndpointId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import { type Transaction, withTransaction } from "../Transaction.js"
import { WebhookEndpointRecord } from "../WebhookEndpoint.js"
import { WebhookEndpointRepo } from "../WebhookEndpointRepo.js"
import * as Fixtures from "./Fixtures.js"

const encode = Schema.encodeSync(WebhookEndpointRecord)
const at = (iso: string): DateTime.Utc => DateTime.unsafeMake(iso)

const make = (
  organizationId: OrganizationId,
  createdBy: MemberId,
  createdAt: DateTime.Utc,
  fields: Partial<WebhookEndpointRecord> = {}
) =>
  new WebhookEndpointRecord({
    id: WebhookEndpointId.make(Fixtures.uuid()),
    organization_id: organizationId,
    url: "https://hooks.example.com/sightline",
    event_types: ["chat.completed"],
    secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=",
    created_by: createdBy,
    created_at: createdAt,
    updated_at: createdAt,
    ...fields
  })

const setup = Effect.gen(function*() {
  const repo = yield* WebhookEndpointRepo
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  const other = yield* Fixtures.organization()
  return { repo, org, member, other }
})

/**
 * Registers the `WebhookEndpointRepo` contract suite. The layer must also provide `OrganizationRepo`
 * and `MemberRepo` (an endpoint names who made it) and `Transaction`.
 *
 * @since 0.1.0
 * @category utils
 */
export const webhookEndpointRepoContract = (
  name: string,
  layer: Layer.Layer<WebhookEndpointRepo | OrganizationRepo | MemberRepo | Transaction, unknown>
): void => {
  describe(`WebhookEndpointRepo contract: ${name}`, () => {
    it.effect("round-trips every field, with optional fields set or absent, and refuses a second id", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const full = make(org.id, member.id, at("2026-03-01T10:00:00.123Z"), {
          description: "Ops channel — *é😀*",
          event_types: ["chat.completed", "change.merged", "api_key.revoked"],
          previous_secret: "whsec_b2xkb2xkb2xkb2xkb2xkb2xkb2xkb2xkb2xkb2xkMTI=",
          previous_secret_expires_at: at("2026-03-02T10:00:00.456Z"),
          disabled_at: at("2026-03-03T10:00:00.789Z"),
          disabled_reason: "the endpoint answered 410 Gone",
          updated_at: at("2026-03-03T10:00:00.789Z")
        })
        const minimal = make(org.id, member.id, at("2026-03-01T11:00:00.000Z"))
        yield* repo.create(full)
        yield* repo.create(minimal)
        for (const endpoint of [full, minimal]) {
          expect(Option.map(yield* repo.get(org.id, endpoint.id), encode)).toEqual(Option.some(encode(endpoint)))
        }
        const again = yield* Effect.flip(repo.create(make(org.id, member.id, minimal.created_at, { id: minimal.id })))
        expect(again._tag).toBe("Conflict")
        expect(yield* repo.get(org.id, WebhookEndpointId.make(Fixtures.uuid()))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("lists oldest first, ties by id; listSubscribed keeps the enabled endpoints of a type", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const first = make(org.id, member.id, at("2026-03-01T09:00:00.000Z"), {
          event_types: ["chat.completed", "change.merged"]
        })
        const tiedA = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"), { event_types: ["change.merged"] })
        const tiedB = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"), { event_types: ["chat.completed"] })
        const disabled = make(org.id, member.id, at("2026-03-01T11:00:00.000Z"), {
          event_types: ["change.merged"],
          disabled_at: at("2026-03-01T12:00:00.000Z")
        })
        for (const e of [disabled, tiedB, first, tiedA]) yield* repo.create(e)
        const tied = [tiedA.id, tiedB.id].sort()
        expect((yield* repo.list(org.id)).map((e) => e.id)).toEqual([first.id, ...tied, disabled.id])
        expect((yield* repo.listSubscribed(org.id, "change.merged")).map((e) => e.id)).toEqual(
          [first.id, tiedA.id]
        )
        expect(yield* repo.listSubscribed(org.id, "eval.run.completed")).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("update replaces a stored endpoint; delete removes it once", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const endpoint = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.create(endpoint)
        const changed = new WebhookEndpointRecord({
          ...endpoint,
          url: "https://hooks.example.com/other",
          event_types: ["playbook.run.failed"],
          updated_at: at("2026-03-05T10:00:00.000Z")
        })
        expect(yield* repo.update(changed)).toBe(true)
        expect(Option.map(yield* repo.get(org.id, endpoint.id), encode)).toEqual(Option.some(encode(changed)))
        expect(yield* repo.update(make(org.id, member.id, endpoint.created_at))).toBe(false)
        expect(yield* repo.delete(org.id, endpoint.id)).toBe(true)
        expect(yield* repo.get(org.id, endpoint.id)).toEqual(Option.none())
        expect(yield* repo.delete(org.id, endpoint.id)).toBe(false)
      }).pipe(Effect.provide(layer)))

    it.effect("an endpoint of one organization is invisible to every method called for another", () =>
      Effect.gen(function*() {
        const { member, org, other, repo } = yield* setup
        const endpoint = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.create(endpoint)
        expect(yield* repo.get(other.id, endpoint.id)).toEqual(Option.none())
        expect(yield* repo.list(other.id)).toEqual([])
        expect(yield* repo.listSubscribed(other.id, "chat.completed")).toEqual([])
        expect(yield* repo.update(new WebhookEndpointRecord({ ...endpoint, organization_id: other.id }))).toBe(false)
        expect(yield* repo.delete(other.id, endpoint.id)).toBe(false)
        expect(Option.map(yield* repo.get(org.id, endpoint.id), encode)).toEqual(Option.some(encode(endpoint)))
      }).pipe(Effect.provide(layer)))

    it.effect("a failed transaction leaves no create, update or delete behind", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const kept = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        const changed = make(org.id, member.id, at("2026-03-01T10:30:00.000Z"))
        yield* repo.create(kept)
        yield* repo.create(changed)
        const discarded = make(org.id, member.id, at("2026-03-01T11:00:00.000Z"))
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* repo.create(discarded)
          expect(yield* repo.update(new WebhookEndpointRecord({ ...changed, url: "https://x.example.com/" }))).toBe(
            true
          )
          expect(yield* repo.delete(org.id, kept.id)).toBe(true)
          return yield* Effect.fail("boom")
        })))
        expect(exit._tag).toBe("Failure")
        expect(yield* repo.get(org.id, discarded.id)).toEqual(Option.none())
        expect(Option.map(yield* repo.get(org.id, kept.id), encode)).toEqual(Option.some(encode(kept)))
        expect(Option.map(yield* repo.get(org.id, changed.id), encode)).toEqual(Option.some(encode(changed)))
      }).pipe(Effect.provide(layer)))
  })
}
