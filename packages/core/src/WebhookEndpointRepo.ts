/**
 * The webhook endpoint repository port.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Ref from "effect/Ref"
import { Conflict } from "./Errors.js"
import type { OrganizationId, WebhookEndpointId } from "./Ids.js"
import type { EventType } from "./OutboundEvent.js"
import { MemoryState } from "./Transaction.js"
import type { WebhookEndpointRecord } from "./WebhookEndpoint.js"

/**
 * Stores webhook endpoints.
 *
 * @since 0.1.0
 * @category services
 */
export class WebhookEndpointRepo extends Context.Tag("@sightline/core/WebhookEndpointRepo")<
  WebhookEndpointRepo,
  WebhookEndpointRepo.Service
>() {}

export declare namespace WebhookEndpointRepo {
  /** Endpoint storage; ids are unique across organizations. */
  export interface Service {
    /** Stores a new endpoint; an id that already exists is a `Conflict`. */
    readonly create: (endpoint: WebhookEndpointRecord) => Effect.Effect<void, Conflict>
    readonly get: (
      organizationId: OrganizationId,
      id: WebhookEndpointId
    ) => Effect.Effect<Option.Option<WebhookEndpointRecord>>
    /** The organization's endpoints, oldest first. */
    readonly list: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<WebhookEndpointRecord>>
    /** The organization's enabled endpoints that subscribe to `type`, oldest first. */
    readonly listSubscribed: (
      organizationId: OrganizationId,
      type: EventType
    ) => Effect.Effect<ReadonlyArray<WebhookEndpointRecord>>
    /** Replaces a stored endpoint; false when there was none. */
    readonly update: (endpoint: WebhookEndpointRecord) => Effect.Effect<boolean>
    /** Deletes an endpoint (and its delivery log); false when there was none. */
    readonly delete: (organizationId: OrganizationId, id: WebhookEndpointId) => Effect.Effect<boolean>
  }
}

const oldestFirst: Order.Order<WebhookEndpointRecord> = Order.combine(
  Order.mapInput(DateTime.Order, (e: WebhookEndpointRecord) => e.created_at),
  Order.mapInput(Order.string, (e: WebhookEndpointRecord) => e.id)
)

/**
 * Endpoints in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<WebhookEndpointRepo, never, MemoryState> = Layer.effect(
  WebhookEndpointRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table(HashMap.empty<WebhookEndpointId, WebhookEndpointRecord>())
    const find = (
      rows: HashMap.HashMap<WebhookEndpointId, WebhookEndpointRecord>,
      organizationId: OrganizationId,
      id: WebhookEndpointId
    ) => HashMap.get(rows, id).pipe(Option.filter((row) => row.organization_id === organizationId))
    const ofOrganization = (organizationId: OrganizationId) =>
      Effect.map(Ref.get(table), (rows) =>
        Arr.sort(
          Arr.filter(Arr.fromIterable(HashMap.values(rows)), (e) => e.organization_id === organizationId),
          oldestFirst
        ))
    return WebhookEndpointRepo.of({
      create: (endpoint) =>
        state.run(Effect.gen(function*() {
          if (HashMap.has(yield* Ref.get(table), endpoint.id)) {
            return yield* new Conflict({ message: `a webhook endpoint with id ${endpoint.id} already exists` })
          }
          yield* Ref.update(table, HashMap.set(endpoint.id, endpoint))
        })),
      get: (organizationId, id) => state.run(Effect.map(Ref.get(table), (rows) => find(rows, organizationId, id))),
      list: (organizationId) => state.run(ofOrganization(organizationId)),
      listSubscribed: (organizationId, type) =>
        state.run(Effect.map(
          ofOrganization(organizationId),
          Arr.filter((e) => e.disabled_at === undefined && e.event_types.includes(type))
        )),
      update: (endpoint) =>
        state.run(Effect.gen(function*() {
          if (Option.isNone(find(yield* Ref.get(table), endpoint.organization_id, endpoint.id))) return false
          yield* Ref.update(table, HashMap.set(endpoint.id, endpoint))
          return true
        })),
      delete: (organizationId, id) =>
        state.run(Effect.gen(function*() {
          if (Option.isNone(find(yield* Ref.get(table), organizationId, id))) return false
          yield* Ref.update(table, HashMap.remove(id))
          return true
        }))
    })
  })
)
