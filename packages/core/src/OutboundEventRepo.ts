/**
 * The outbound event repository port: the events recorded for delivery, and the log of every
 * delivery attempt.
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
import type { OrganizationId, OutboundEventId, WebhookAttemptId, WebhookEndpointId } from "./Ids.js"
import type { AttemptRecord, EventRecord } from "./OutboundEvent.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores outbound events and delivery attempts.
 *
 * @since 0.1.0
 * @category services
 */
export class OutboundEventRepo extends Context.Tag("@sightline/core/OutboundEventRepo")<
  OutboundEventRepo,
  OutboundEventRepo.Service
>() {}

export declare namespace OutboundEventRepo {
  /** What the log can be narrowed to. */
  export interface AttemptQuery {
    readonly limit: number
    readonly eventId?: OutboundEventId | undefined
  }

  /** Event and attempt storage. */
  export interface Service {
    readonly createEvent: (event: EventRecord) => Effect.Effect<void>
    readonly getEvent: (
      organizationId: OrganizationId,
      id: OutboundEventId
    ) => Effect.Effect<Option.Option<EventRecord>>
    readonly recordAttempt: (attempt: AttemptRecord) => Effect.Effect<void>
    /** An endpoint's latest attempts, newest first. */
    readonly listAttempts: (
      organizationId: OrganizationId,
      endpointId: WebhookEndpointId,
      query: AttemptQuery
    ) => Effect.Effect<ReadonlyArray<AttemptRecord>>
  }
}

const newestFirst: Order.Order<AttemptRecord> = Order.reverse(Order.combine(
  Order.mapInput(DateTime.Order, (a: AttemptRecord) => a.created_at),
  Order.mapInput(Order.string, (a: AttemptRecord) => a.id)
))

/**
 * Events and attempts in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<OutboundEventRepo, never, MemoryState> = Layer.effect(
  OutboundEventRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const events = yield* state.table(HashMap.empty<OutboundEventId, EventRecord>())
    const attempts = yield* state.table(HashMap.empty<WebhookAttemptId, AttemptRecord>())
    return OutboundEventRepo.of({
      createEvent: (event) => state.run(Ref.update(events, HashMap.set(event.id, event))),
      getEvent: (organizationId, id) =>
        state.run(Effect.map(
          Ref.get(events),
          (rows) => HashMap.get(rows, id).pipe(Option.filter((e) => e.organization_id === organizationId))
        )),
      recordAttempt: (attempt) => state.run(Ref.update(attempts, HashMap.set(attempt.id, attempt))),
      listAttempts: (organizationId, endpointId, query) =>
        state.run(Effect.map(Ref.get(attempts), (rows) =>
          Arr.take(
            Arr.sort(
              Arr.filter(
                Arr.fromIterable(HashMap.values(rows)),
                (a) =>
                  a.organization_id === organizationId && a.endpoint_id === endpointId &&
                  (query.eventId === undefined || a.event_id === query.eventId)
              ),
              newestFirst
            ),
            query.limit
          )))
    })
  })
)
