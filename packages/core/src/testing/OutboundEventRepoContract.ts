/**
 * The contract every `OutboundEventRepo` implementation satisfies.
 *
 * Every test creates its own organizations, members and endpoints, so the suite runs on a shared,
 * non-empty database. Rows are compared through their encoded form, so a timestamp or an optional
 * field that does not survive storage fails the comparison.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type OrganizationId, OutboundEventId, WebhookAttemptId, WebhookEndpointId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import { AttemptRecord, EventRecord, type EventType } from "../OutboundEvent.js"
import { OutboundEventRepo } from "../OutboundEventRepo.js"
import { type Transaction, withTransaction } from "../Transaction.js"
import { WebhookEndpointRecord } from "../WebhookEndpoint.js"
import { WebhookEndpointRepo } from "../WebhookEndpointRepo.js"
import * as Fixtures from "./Fixtures.js"

const encodeEvent = Schema.encodeSync(EventRecord)
const encodeAttempt = Schema.encodeSync(AttemptRecord)
const at = (iso: string): DateTime.Utc => DateTime.unsafeMake(iso)

const event = (organizationId: OrganizationId, type: EventType = "chat.completed") =>
  new EventRecord({
    id: OutboundEventId.make(Fixtures.uuid()),
    organization_id: organizationId,
    type,
    body: JSON.stringify({ type, data: { chat_id: Fixtures.uuid(), title: "é😀" } }),
    created_at: at("2026-03-01T10:00:00.123Z")
  })

const attempt = (
  e: EventRecord,
  endpointId: WebhookEndpointId,
  createdAt: DateTime.Utc,
  fields: Partial<AttemptRecord> = {}
) =>
  new AttemptRecord({
    id: WebhookAttemptId.make(Fixtures.uuid()),
    organization_id: e.organization_id,
    endpoint_id: endpointId,
    event_id: e.id,
    event_type: e.type,
    attempt: 1,
    succeeded: true,
    response_status: 204,
    latency_ms: 12,
    created_at: createdAt,
    ...fields
  })

// Attempts belong to an endpoint: a store may hold it to one that exists.
const setup = Effect.gen(function*() {
  const repo = yield* OutboundEventRepo
  const endpoints = yield* WebhookEndpointRepo
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  const other = yield* Fixtures.organization()
  const endpoint = () =>
    Effect.gen(function*() {
      const id = WebhookEndpointId.make(Fixtures.uuid())
      yield* Effect.orDie(endpoints.create(
        new WebhookEndpointRecord({
          id,
          organization_id: org.id,
          url: "https://hooks.example.com/sightline",
          event_types: ["chat.completed"],
          secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=",
          created_by: member.id,
          created_at: at("2026-03-01T09:00:00.000Z"),
          updated_at: at("2026-03-01T09:00:00.000Z")
        })
      ))
      return id
    })
  return { repo, org, other, endpoint }
})

/**
 * Registers the `OutboundEventRepo` contract suite. The layer must also provide
 * `WebhookEndpointRepo`, `OrganizationRepo` and `MemberRepo` (an attempt is of an endpoint, which
 * names who made it) and `Transaction`.
 *
 * @since 0.1.0
 * @category utils
 */
export const outboundEventRepoContract = (
  name: string,
  layer: Layer.Layer<
    OutboundEventRepo | WebhookEndpointRepo | OrganizationRepo | MemberRepo | Transaction,
    unknown
  >
): void => {
  describe(`OutboundEventRepo contract: ${name}`, () => {
    it.effect("round-trips an event and attempts with optional fields set or absent", () =>
      Effect.gen(function*() {
        const { endpoint, org, repo } = yield* setup
        const hook = yield* endpoint()
        const e = event(org.id, "change.merged")
        yield* repo.createEvent(e)
        expect(Option.map(yield* repo.getEvent(org.id, e.id), encodeEvent)).toEqual(Option.some(encodeEvent(e)))
        expect(yield* repo.getEvent(org.id, OutboundEventId.make(Fixtures.uuid()))).toEqual(Option.none())
        const failed = attempt(e, hook, at("2026-03-01T10:00:01.250Z"), {
          succeeded: false,
          response_status: undefined,
          error: "connection refused",
          next_attempt_at: at("2026-03-01T10:00:31.250Z"),
          latency_ms: 0
        })
        const delivered = attempt(e, hook, at("2026-03-01T10:00:31.500Z"), { attempt: 2, response_status: 200 })
        yield* repo.recordAttempt(failed)
        yield* repo.recordAttempt(delivered)
        expect((yield* repo.listAttempts(org.id, hook, { limit: 10 })).map((a) => encodeAttempt(a))).toEqual(
          [encodeAttempt(delivered), encodeAttempt(failed)]
        )
      }).pipe(Effect.provide(layer)))

    it.effect("lists an endpoint's attempts newest first, ties by id, up to the limit, of one event when asked", () =>
      Effect.gen(function*() {
        const { endpoint, org, repo } = yield* setup
        const [hook, elsewhere] = [yield* endpoint(), yield* endpoint()]
        const [first, second] = [event(org.id), event(org.id)]
        yield* repo.createEvent(first)
        yield* repo.createEvent(second)
        const oldest = attempt(first, hook, at("2026-03-01T10:00:00.000Z"))
        const tiedA = attempt(first, hook, at("2026-03-01T11:00:00.000Z"))
        const tiedB = attempt(second, hook, at("2026-03-01T11:00:00.000Z"))
        const newest = attempt(second, hook, at("2026-03-01T12:00:00.000Z"))
        const other = attempt(first, elsewhere, at("2026-03-01T13:00:00.000Z"))
        for (const a of [tiedB, other, oldest, newest, tiedA]) yield* repo.recordAttempt(a)
        const tied = [tiedA.id, tiedB.id].sort().reverse()
        expect((yield* repo.listAttempts(org.id, hook, { limit: 10 })).map((a) => a.id)).toEqual(
          [newest.id, ...tied, oldest.id]
        )
        expect((yield* repo.listAttempts(org.id, hook, { limit: 2 })).map((a) => a.id)).toEqual([newest.id, tied[0]])
        expect((yield* repo.listAttempts(org.id, hook, { limit: 10, eventId: first.id })).map((a) => a.id)).toEqual(
          [tiedA.id, oldest.id]
        )
        expect((yield* repo.listAttempts(org.id, elsewhere, { limit: 10 })).map((a) => a.id)).toEqual([other.id])
      }).pipe(Effect.provide(layer)))

    it.effect("an event and its attempts are invisible to another organization", () =>
      Effect.gen(function*() {
        const { endpoint, org, other, repo } = yield* setup
        const hook = yield* endpoint()
        const e = event(org.id)
        yield* repo.createEvent(e)
        yield* repo.recordAttempt(attempt(e, hook, at("2026-03-01T10:00:00.000Z")))
        expect(yield* repo.getEvent(other.id, e.id)).toEqual(Option.none())
        expect(yield* repo.listAttempts(other.id, hook, { limit: 10 })).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("a failed transaction leaves no event or attempt behind", () =>
      Effect.gen(function*() {
        const { endpoint, org, repo } = yield* setup
        const hook = yield* endpoint()
        const e = event(org.id)
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* repo.createEvent(e)
          yield* repo.recordAttempt(attempt(e, hook, at("2026-03-01T10:00:00.000Z")))
          return yield* Effect.fail("boom")
        })))
        expect(exit._tag).toBe("Failure")
        expect(yield* repo.getEvent(org.id, e.id)).toEqual(Option.none())
        expect(yield* repo.listAttempts(org.id, hook, { limit: 10 })).toEqual([])
      }).pipe(Effect.provide(layer)))
  })
}
