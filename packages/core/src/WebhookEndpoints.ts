/**
 * The webhook endpoint use cases (`/v2/webhook-endpoints`): admins (`organization:write`) register
 * the endpoints that receive the organization's outbound events, change and remove them, rotate
 * their secrets, read their delivery logs and replay events. Every lookup is scoped to the caller's
 * organization: another organization's endpoint or event is `NotFound`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as AuditLog from "./AuditLog.js"
import { Auditor } from "./Auditor.js"
import * as Decision from "./Decision.js"
import { InvalidRequest, NotFound, type PermissionDenied, type Unauthenticated } from "./Errors.js"
import { EventSender } from "./EventSender.js"
import { IdGenerator } from "./IdGenerator.js"
import { type OutboundEventId, WebhookEndpointId } from "./Ids.js"
import * as OutboundEvent from "./OutboundEvent.js"
import { OutboundEventRepo } from "./OutboundEventRepo.js"
import { OutboundEvents } from "./OutboundEvents.js"
import * as Policy from "./Policy.js"
import { SecretHasher } from "./Secret.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"
import * as WebhookEndpoint from "./WebhookEndpoint.js"
import { WebhookEndpointRepo } from "./WebhookEndpointRepo.js"

type Denied = Unauthenticated | PermissionDenied

/**
 * The webhook endpoint use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class WebhookEndpoints extends Context.Tag("@sightline/core/WebhookEndpoints")<
  WebhookEndpoints,
  WebhookEndpoints.Service
>() {}

export declare namespace WebhookEndpoints {
  /** The operations, all `organization:write`. */
  export interface Service {
    /** `POST /v2/webhook-endpoints`: the secret is in this answer only. */
    readonly create: (
      principal: Policy.Principal,
      request: WebhookEndpoint.CreateRequest
    ) => Effect.Effect<WebhookEndpoint.Created, Denied | InvalidRequest>
    /** `GET /v2/webhook-endpoints`. */
    readonly list: (principal: Policy.Principal) => Effect.Effect<WebhookEndpoint.ListResponse, Denied>
    /** `GET /v2/webhook-endpoints/{id}`. */
    readonly get: (
      principal: Policy.Principal,
      id: WebhookEndpointId
    ) => Effect.Effect<WebhookEndpoint.WebhookEndpoint, Denied | NotFound>
    /** `PATCH /v2/webhook-endpoints/{id}`. */
    readonly update: (
      principal: Policy.Principal,
      id: WebhookEndpointId,
      request: WebhookEndpoint.UpdateRequest
    ) => Effect.Effect<WebhookEndpoint.WebhookEndpoint, Denied | NotFound | InvalidRequest>
    /** `DELETE /v2/webhook-endpoints/{id}`: its pending deliveries are dropped. */
    readonly delete: (
      principal: Policy.Principal,
      id: WebhookEndpointId
    ) => Effect.Effect<WebhookEndpoint.DeleteResponse, Denied | NotFound>
    /** `POST /v2/webhook-endpoints/{id}/rotate-secret`: the old secret signs on for the grace period. */
    readonly rotateSecret: (
      principal: Policy.Principal,
      id: WebhookEndpointId
    ) => Effect.Effect<WebhookEndpoint.Rotated, Denied | NotFound>
    /** `GET /v2/webhook-endpoints/{id}/deliveries`: the latest attempts, newest first. */
    readonly deliveries: (
      principal: Policy.Principal,
      id: WebhookEndpointId,
      query: WebhookEndpoint.DeliveriesQuery
    ) => Effect.Effect<WebhookEndpoint.DeliveriesResponse, Denied | NotFound>
    /** `POST /v2/webhook-endpoints/{id}/events/{event_id}/replay`. */
    readonly replay: (
      principal: Policy.Principal,
      id: WebhookEndpointId,
      eventId: OutboundEventId
    ) => Effect.Effect<WebhookEndpoint.ReplayResponse, Denied | NotFound>
  }
}

/**
 * Builds the use cases.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const repo = yield* WebhookEndpointRepo
  const log = yield* OutboundEventRepo
  const events = yield* OutboundEvents
  const sender = yield* EventSender
  const hasher = yield* SecretHasher
  const ids = yield* IdGenerator
  const tx = yield* Transaction
  const auditor = yield* Auditor
  const audit = (principal: Policy.Principal, action: AuditLog.Action, id: string, details: AuditLog.Details) =>
    auditor.recordBy(principal, { action, resourceType: "webhook_endpoint", resourceId: id, details })

  const admit = (principal: Policy.Principal) =>
    Decision.enforce(Policy.requirePermission(principal, "organization:write"))

  // The network rule of the sender, checked at registration too, so a URL that can never receive
  // is refused at once rather than failing every delivery.
  const checkUrl = (url: string) => {
    const problem = sender.urlProblem(url)
    return problem === undefined ? Effect.void : Effect.fail(new InvalidRequest({ message: problem }))
  }

  const newSecret = Effect.map(hasher.generate, (bytes) => `${WebhookEndpoint.SECRET_PREFIX}${bytes}`)

  const find = (principal: Policy.Principal, id: WebhookEndpointId) =>
    Effect.flatMap(
      repo.get(principal.organizationId, id),
      Option.match({ onNone: () => Effect.fail(new NotFound()), onSome: Effect.succeed })
    )

  const create = Traced.fn("WebhookEndpoints.create")(
    function*(principal: Policy.Principal, request: WebhookEndpoint.CreateRequest) {
      yield* admit(principal)
      yield* checkUrl(request.url)
      return yield* tx.withTransaction(Effect.gen(function*() {
        if ((yield* repo.list(principal.organizationId)).length >= WebhookEndpoint.MAX_ENDPOINTS) {
          return yield* new InvalidRequest({
            message: `an organization has at most ${WebhookEndpoint.MAX_ENDPOINTS} webhook endpoints`
          })
        }
        const now = yield* DateTime.now
        const record = new WebhookEndpoint.WebhookEndpointRecord({
          id: WebhookEndpointId.make(yield* ids.uuid),
          organization_id: principal.organizationId,
          url: request.url,
          ...(request.description === undefined ? {} : { description: request.description }),
          event_types: [...new Set(request.event_types)],
          secret: yield* newSecret,
          created_by: principal.memberId,
          created_at: now,
          updated_at: now
        })
        yield* Effect.orDie(repo.create(record))
        yield* audit(principal, "webhook_endpoint.create", record.id, {
          url: record.url,
          event_types: record.event_types.join(",")
        })
        return { ...WebhookEndpoint.toWebhookEndpoint(record), secret: record.secret }
      }))
    }
  )

  const list = Traced.fn("WebhookEndpoints.list")(function*(principal: Policy.Principal) {
    yield* admit(principal)
    return { webhook_endpoints: (yield* repo.list(principal.organizationId)).map(WebhookEndpoint.toWebhookEndpoint) }
  })

  const get = Traced.fn("WebhookEndpoints.get")(function*(principal: Policy.Principal, id: WebhookEndpointId) {
    yield* admit(principal)
    return WebhookEndpoint.toWebhookEndpoint(yield* find(principal, id))
  })

  const update = Traced.fn("WebhookEndpoints.update")(
    function*(principal: Policy.Principal, id: WebhookEndpointId, request: WebhookEndpoint.UpdateRequest) {
      yield* admit(principal)
      if (request.url !== undefined) yield* checkUrl(request.url)
      return yield* tx.withTransaction(Effect.gen(function*() {
        const found = yield* find(principal, id)
        const now = yield* DateTime.now
        const { disabled_at: _at, disabled_reason: _reason, ...rest } = found
        const enabled = request.enabled ?? found.disabled_at === undefined
        const record = new WebhookEndpoint.WebhookEndpointRecord({
          ...rest,
          ...(request.url === undefined ? {} : { url: request.url }),
          ...(request.description === undefined ? {} : { description: request.description }),
          ...(request.event_types === undefined ? {} : { event_types: [...new Set(request.event_types)] }),
          ...(enabled
            ? {}
            : found.disabled_at !== undefined
            ? { disabled_at: found.disabled_at, disabled_reason: found.disabled_reason ?? "turned off by an admin" }
            : { disabled_at: now, disabled_reason: "turned off by an admin" }),
          updated_at: now
        })
        yield* repo.update(record)
        yield* audit(principal, "webhook_endpoint.update", id, {
          url: record.url,
          event_types: record.event_types.join(","),
          enabled: String(enabled)
        })
        return WebhookEndpoint.toWebhookEndpoint(record)
      }))
    }
  )

  const remove = Traced.fn("WebhookEndpoints.delete")(function*(principal: Policy.Principal, id: WebhookEndpointId) {
    yield* admit(principal)
    return yield* tx.withTransaction(Effect.gen(function*() {
      const found = yield* find(principal, id)
      yield* repo.delete(principal.organizationId, id)
      yield* audit(principal, "webhook_endpoint.delete", id, { url: found.url })
      return { id, success: true }
    }))
  })

  const rotateSecret = Traced.fn("WebhookEndpoints.rotateSecret")(
    function*(principal: Policy.Principal, id: WebhookEndpointId) {
      yield* admit(principal)
      return yield* tx.withTransaction(Effect.gen(function*() {
        const found = yield* find(principal, id)
        const now = yield* DateTime.now
        const expires = DateTime.addDuration(now, WebhookEndpoint.rotationGrace)
        const record = new WebhookEndpoint.WebhookEndpointRecord({
          ...found,
          secret: yield* newSecret,
          previous_secret: found.secret,
          previous_secret_expires_at: expires,
          updated_at: now
        })
        yield* repo.update(record)
        yield* audit(principal, "webhook_endpoint.rotate_secret", id, {
          grace_ends_at: DateTime.formatIso(expires)
        })
        return { id, secret: record.secret, previous_secret_expires_at: expires }
      }))
    }
  )

  const deliveries = Traced.fn("WebhookEndpoints.deliveries")(
    function*(principal: Policy.Principal, id: WebhookEndpointId, query: WebhookEndpoint.DeliveriesQuery) {
      yield* admit(principal)
      yield* find(principal, id)
      const attempts = yield* log.listAttempts(principal.organizationId, id, {
        limit: query.limit ?? 50,
        eventId: query.event_id
      })
      return { deliveries: attempts.map(OutboundEvent.toDeliveryAttempt) }
    }
  )

  const replay = Traced.fn("WebhookEndpoints.replay")(
    function*(principal: Policy.Principal, id: WebhookEndpointId, eventId: OutboundEventId) {
      yield* admit(principal)
      if (!(yield* events.replay(principal.organizationId, id, eventId))) return yield* new NotFound()
      yield* audit(principal, "webhook_endpoint.replay", id, { event_id: eventId })
      return { endpoint_id: id, event_id: eventId, queued: true }
    }
  )

  return WebhookEndpoints.of({ create, list, get, update, delete: remove, rotateSecret, deliveries, replay })
})

/**
 * The use cases over their repositories, `OutboundEvents`, `EventSender`, `SecretHasher`,
 * `Auditor`, `Transaction` and `IdGenerator`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(WebhookEndpoints, make)
