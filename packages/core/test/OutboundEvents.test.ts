import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { MemoryEventSender } from "../src/EventSender.js"
import { OutboundEventId } from "../src/Ids.js"
import { JobQueue } from "../src/JobQueue.js"
import * as Organizations from "../src/Organizations.js"
import * as OutboundEvent from "../src/OutboundEvent.js"
import { OutboundEvents } from "../src/OutboundEvents.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"
import { WebhookDelivery } from "../src/WebhookDelivery.js"
import * as WebhookDeliveryLayer from "../src/WebhookDelivery.js"
import { WebhookEndpoints } from "../src/WebhookEndpoints.js"
import * as WebhookEndpointsLayer from "../src/WebhookEndpoints.js"

const TestLayer = Layer.mergeAll(Organizations.layer, WebhookEndpointsLayer.layer, WebhookDeliveryLayer.layer).pipe(
  Layer.provideMerge(Memory.layer)
)

/** Claims the due delivery, attempts it, and settles it as the worker does. */
const attempt = Effect.gen(function*() {
  const jobs = yield* JobQueue
  const claimed = yield* jobs.claim({ workerId: "test", kinds: [OutboundEvent.jobKind], leaseMillis: 60_000 })
  if (Option.isNone(claimed)) return undefined
  const retry = yield* (yield* WebhookDelivery).deliver(claimed.value)
  yield* Effect.orDie(retry === undefined ? jobs.complete(claimed.value) : jobs.fail(claimed.value, retry))
  return { job: claimed.value, retry }
})

const setup = Effect.gen(function*() {
  const { admin, org } = yield* Fixtures.organizationWithAdmin()
  const endpoints = yield* WebhookEndpoints
  const created = yield* endpoints.create(admin, {
    url: "https://hooks.example.com/sightline",
    event_types: ["playbook.run.completed", "api_key.revoked"]
  })
  return { admin, org, endpoints, created }
})

describe("OutboundEvents", () => {
  it.effect("an endpoint's secret is shown once; member keys, http URLs and foreign ids are refused", () =>
    Effect.gen(function*() {
      const { admin, created, endpoints } = yield* setup
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      const listed = yield* endpoints.list(admin)
      expect(listed.webhook_endpoints).toHaveLength(1)
      expect(JSON.stringify(listed)).not.toContain(created.secret.slice(6))
      expect(listed.webhook_endpoints[0]!.enabled).toBe(true)

      const refused = yield* Effect.flip(
        endpoints.create(admin, { url: "http://10.0.0.1/x", event_types: ["chat.completed"] })
      )
      expect(refused._tag).toBe("InvalidRequest")

      const other = yield* Fixtures.organizationWithAdmin("Other", "bo@other.example")
      expect((yield* Effect.flip(endpoints.get(other.admin, created.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(endpoints.delete(other.admin, created.id)))._tag).toBe("NotFound")

      const { member } = yield* Fixtures.organizationWithMember
      const plain = yield* Fixtures.principal(member.organization_id, member.id)
      expect((yield* Effect.flip(endpoints.list(plain)))._tag).toBe("PermissionDenied")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("an event goes to each subscribed endpoint of its organization once, retried on the schedule until it succeeds", () =>
    Effect.gen(function*() {
      const { admin, created, endpoints, org } = yield* setup
      // Not subscribed to this type, and another organization's endpoint: neither receives.
      yield* endpoints.create(admin, { url: "https://hooks.example.com/other", event_types: ["chat.completed"] })
      const other = yield* Fixtures.organizationWithAdmin("Other", "bo@other.example")
      yield* endpoints.create(other.admin, {
        url: "https://other.example/hook",
        event_types: ["playbook.run.completed"]
      })

      const sender = yield* MemoryEventSender
      yield* sender.respond((_, n) => n <= 2 ? { status: 500, latencyMillis: 12 } : { status: 204, latencyMillis: 7 })
      yield* (yield* OutboundEvents).publish(org, "playbook.run.completed", { playbook_id: "p1", chat_id: "c1" })

      const first = yield* attempt
      expect(first?.retry?.error).toBe("the endpoint answered 500")
      const now = yield* DateTime.now
      const wait = DateTime.distance(now, first!.retry!.retryAt!)
      expect(wait).toBeGreaterThanOrEqual(4_000)
      expect(wait).toBeLessThanOrEqual(6_000)
      // Not due yet.
      expect(yield* attempt).toBeUndefined()
      yield* TestClock.adjust(Duration.seconds(6))
      const second = yield* attempt
      expect(second?.job.attempts).toBe(2)
      const later = DateTime.distance(yield* DateTime.now, second!.retry!.retryAt!)
      expect(later).toBeGreaterThanOrEqual(4 * 60_000)
      yield* TestClock.adjust(Duration.minutes(6))
      expect((yield* attempt)?.retry).toBeUndefined()
      expect(yield* attempt).toBeUndefined()

      const sent = yield* sender.sent
      expect(sent).toHaveLength(3)
      expect(new Set(sent.map((r) => r.url))).toEqual(new Set(["https://hooks.example.com/sightline"]))
      // One body, one id, on every attempt; a new timestamp each time.
      expect(new Set(sent.map((r) => r.body)).size).toBe(1)
      expect(new Set(sent.map((r) => r.id)).size).toBe(1)
      expect(sent[0]!.timestamp.getTime()).toBeLessThan(sent[2]!.timestamp.getTime())
      const body = JSON.parse(sent[0]!.body)
      expect(body).toEqual({
        type: "playbook.run.completed",
        timestamp: expect.any(String),
        data: { playbook_id: "p1", chat_id: "c1" }
      })
      expect(sent[0]!.secrets).toEqual([created.secret])

      const log = yield* endpoints.deliveries(admin, created.id, {})
      expect(log.deliveries.map((d) => [d.attempt, d.succeeded, d.response_status])).toEqual([
        [3, true, 204],
        [2, false, 500],
        [1, false, 500]
      ])
      expect(log.deliveries[2]!.next_attempt_at).toBeDefined()
      expect(log.deliveries[0]!.next_attempt_at).toBeUndefined()
      expect(log.deliveries[0]!.latency_ms).toBe(7)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("410 disables the endpoint until an admin turns it on; Retry-After sets the next attempt", () =>
    Effect.gen(function*() {
      const { admin, created, endpoints, org } = yield* setup
      const sender = yield* MemoryEventSender
      const events = yield* OutboundEvents
      yield* sender.respond(() => ({ status: 429, latencyMillis: 1, retryAfterMillis: 90_000 }))
      yield* events.publish(org, "api_key.revoked", { api_key_id: "k1" })
      const throttled = yield* attempt
      expect(DateTime.distance(yield* DateTime.now, throttled!.retry!.retryAt!)).toBe(90_000)

      yield* sender.respond(() => ({ status: 410, latencyMillis: 1 }))
      yield* TestClock.adjust(Duration.seconds(91))
      expect((yield* attempt)?.retry).toBeUndefined()
      const disabled = yield* endpoints.get(admin, created.id)
      expect(disabled.enabled).toBe(false)
      expect(disabled.disabled_reason).toMatch(/410/)

      // Nothing is queued for a disabled endpoint.
      yield* events.publish(org, "api_key.revoked", { api_key_id: "k2" })
      expect(yield* attempt).toBeUndefined()

      const enabled = yield* endpoints.update(admin, created.id, { enabled: true })
      expect(enabled.enabled).toBe(true)
      expect(enabled.disabled_reason).toBeUndefined()
      yield* sender.respond(() => ({ status: 200, latencyMillis: 1 }))
      yield* events.publish(org, "api_key.revoked", { api_key_id: "k3" })
      expect((yield* attempt)?.retry).toBeUndefined()
      expect(JSON.parse((yield* sender.sent).at(-1)!.body).data).toEqual({ api_key_id: "k3" })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a rotated secret signs beside the new one for a day; replay sends the same event again", () =>
    Effect.gen(function*() {
      const { admin, created, endpoints, org } = yield* setup
      const sender = yield* MemoryEventSender
      const rotated = yield* endpoints.rotateSecret(admin, created.id)
      expect(rotated.secret).not.toBe(created.secret)
      yield* (yield* OutboundEvents).publish(org, "api_key.revoked", { api_key_id: "k1" })
      yield* attempt
      const first = (yield* sender.sent)[0]!
      expect(first.secrets).toEqual([rotated.secret, created.secret])

      yield* TestClock.adjust(Duration.hours(25))
      const eventId = OutboundEventId.make(first.id)
      expect(yield* endpoints.replay(admin, created.id, eventId)).toEqual({
        endpoint_id: created.id,
        event_id: eventId,
        queued: true
      })
      yield* attempt
      const replayed = (yield* sender.sent)[1]!
      expect(replayed.id).toBe(first.id)
      expect(replayed.body).toBe(first.body)
      expect(replayed.secrets).toEqual([rotated.secret])

      const other = yield* Fixtures.organizationWithAdmin("Other", "bo@other.example")
      const theirs = yield* endpoints.create(other.admin, {
        url: "https://other.example/hook",
        event_types: ["api_key.revoked"]
      })
      // Another organization's event, or endpoint, is not found.
      expect((yield* Effect.flip(endpoints.replay(other.admin, theirs.id, eventId)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(endpoints.replay(other.admin, created.id, eventId)))._tag).toBe("NotFound")
    }).pipe(Effect.provide(TestLayer)))

  it("the schedule spans about three days over ten attempts", () => {
    expect(OutboundEvent.maxAttempts).toBe(10)
    const total = OutboundEvent.retryDelays.reduce((sum, d) => sum + Duration.toHours(d), 0)
    expect(total).toBeGreaterThan(72)
    expect(total).toBeLessThan(80)
    expect(OutboundEvent.nextDelay(10, 1)).toBeUndefined()
    expect(Duration.toMillis(OutboundEvent.nextDelay(1, 1.2)!)).toBe(6_000)
    expect(Duration.toHours(OutboundEvent.nextDelay(3, 1, 7 * 24 * 3_600_000)!)).toBe(24)
  })
})
